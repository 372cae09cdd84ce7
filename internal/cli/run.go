package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/commands"
)

// runCommand builds `harness run`.
func runCommand(env *Env) *cobra.Command {
	var (
		f        agentFlags
		output   string
		strict   bool
		worktree string
		budget   agent.Budget
	)
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run the agent on one prompt and exit",
		Long: "run boots the configured harness, opens a session (new, --continue or --session ID) and runs one\n" +
			"turn: the model works with its tools until it answers, --max-steps model calls were made, or Ctrl-C.\n" +
			"PROMPT is the arguments joined by spaces, or `-` to read it from stdin; text piped to stdin is the\n" +
			"prompt, or comes before the arguments' prompt (as with `claude -p`).\n\n" +
			"Output (--output): text streams the answer to stdout and one line per tool call and result to\n" +
			"stderr; stream-json writes one JSON event per line ({\"v\":1,\"type\":...}); json writes one object\n" +
			"at the end: {result, sessionId, isError, steps, usage, ...}.\n\n" +
			"Exit status: 0 the model finished; 1 runtime failure (model error, max steps); 2 usage or\n" +
			"configuration error (e.g. no API key, --max-cost on a route without prices); 3 --strict and a tool\n" +
			"call was refused; 4 the budget (--max-cost, --max-tokens, agent.budget) stopped the turn before a\n" +
			"model call; 5 in plan mode, the turn ended on a plan that no one could approve here (the plan is\n" +
			"printed; resume the session in another mode to carry it out); 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (after running tools were stopped).",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := readPrompt(env.Stdin, args)
			if err != nil && !(f.compact && len(args) == 0) {
				return UsageError(err)
			}
			switch output {
			case OutputText, OutputJSON, OutputStreamJSON:
			default:
				return UsageError(fmt.Errorf("--output %q: want text, json or stream-json", output))
			}
			f.maxStepsSet = cmd.Flags().Changed("max-steps")
			opts, err := f.options()
			if err != nil {
				return UsageError(err)
			}
			if opts.Budget, err = budgetFlags(budget); err != nil {
				return UsageError(err)
			}
			var wt *runWorktree
			if cmd.Flags().Changed("worktree") {
				if wt, err = startWorktree(env, &f, worktree); err != nil {
					return err
				}
			}
			p := newPrinter(output, env.Stdout, env.Stderr)
			f.p = p
			host, err := bootAgent(env, &f)
			if err != nil {
				p.close()
				if wt != nil {
					wt.finish(env.Ctx, env.Stderr)
				}
				return err
			}
			if wt != nil {
				wt.checkRoots(env, host)
			}
			// A headless run offers the model every server's tools from its
			// first step, as Claude Code's -p does: wait for the connects.
			awaitMCP(env.Ctx, host.h)
			opts.Observer = p.observe
			f.errw = env.Stderr
			res, runErr := runOnce(env.Ctx, host, &f, opts, prompt)
			p.close()
			if serr := host.stop(); serr != nil && runErr == nil {
				runErr = Failure(fmt.Errorf("stopping: %w", serr))
			}
			p.final(res)
			if wt != nil {
				wt.finish(env.Ctx, env.Stderr)
			}
			if runErr == nil && res != nil && res.Reason == reasonPlan {
				p.plan(res.Text)
				return &ExitError{Code: ExitPlan, Err: fmt.Errorf("the plan above awaits your approval (no one could answer in this run); "+
					"to carry it out: harness run --session %s --permission-mode acceptEdits \"Go ahead\" (or --permission-mode default to approve each edit); "+
					"to change it: harness run --session %s --permission-mode plan \"…what to change…\"", res.SessionID, res.SessionID)}
			}
			if budget.MaxCostUSD != 0 && errors.Is(runErr, agent.ErrBudgetUnpriced) {
				return UsageError(fmt.Errorf("--max-cost %v: %w", budget.MaxCostUSD, runErr))
			}
			if runErr != nil && env.Ctx.Err() != nil && errors.Is(runErr, context.Canceled) {
				return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
			}
			if n := p.denied(); runErr == nil && strict && n > 0 {
				return &ExitError{Code: ExitDenied, Err: fmt.Errorf("--strict: %s denied", plural(n, "tool call"))}
			}
			return runErr
		},
	}
	fl := cmd.Flags()
	f.register(fl, "maximum model calls for this prompt (default: agent maxSteps, 50)")
	fl.BoolVar(&f.compact, "compact", false, "compact the session's history first (with --continue or --session; PROMPT may then be omitted)")
	fl.StringVarP(&output, "output", "o", OutputText, "output format: text, json or stream-json")
	registerCompletions(env, cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", outputCompletion)
	fl.Float64Var(&budget.MaxCostUSD, "max-cost", 0, "stop before a model call that would bring the session's cost over `USD` (needs the route's prices; exit 4)")
	fl.Int64Var(&budget.MaxTokens, "max-tokens", 0, "stop before a model call that would bring the session's prompt+completion tokens over `N` (exit 4)")
	fl.StringVar(&worktree, "worktree", "", "run in a new git worktree `NAME` (branch harness/NAME; auto: a generated name), confined to it; summarized at the end and removed when clean")
	fl.BoolVar(&strict, "strict", false, "exit 3 when a permission decision refused any tool call (the json result lists them in permissionDenials)")
	return cmd
}

// reasonPlan is the result reason of a turn that ended on a plan no one
// could approve (the plan-mode plugin's exit_plan_mode, headless).
const reasonPlan = "plan"

// budgetFlags checks --max-cost and --max-tokens (0: the agent row's cap).
func budgetFlags(b agent.Budget) (agent.Budget, error) {
	if b.MaxCostUSD < 0 || math.IsNaN(b.MaxCostUSD) || math.IsInf(b.MaxCostUSD, 0) {
		return b, fmt.Errorf("--max-cost %v: want a positive number of US dollars", b.MaxCostUSD)
	}
	if b.MaxTokens < 0 {
		return b, fmt.Errorf("--max-tokens %d: must not be negative", b.MaxTokens)
	}
	return b, nil
}

// runOnce opens the session and runs one turn.
func runOnce(ctx context.Context, host *agentHost, f *agentFlags, opts agent.Options, prompt string) (*agent.Result, error) {
	ss, err := host.open(ctx, f, opts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ss.Close(context.Background()) }()
	if f.compact {
		info, err := ss.Compact(ctx, "")
		if err != nil {
			return &agent.Result{SessionID: ss.ID(), IsError: true, Error: err.Error(), Reason: "error"}, classify(fmt.Errorf("compaction: %w", err))
		}
		fmt.Fprintf(f.errw, "compacted session %s: %d messages summarized, %d kept; context %d → %d tokens\n", ss.ID(), info.Summarized, info.Kept, info.TokensBefore, info.TokensAfter)
		if prompt == "" {
			return &agent.Result{SessionID: ss.ID(), Reason: "compacted"}, nil
		}
	}
	prompt, err = expandCommand(ctx, host, ss, prompt, f.errw)
	if err != nil {
		return &agent.Result{SessionID: ss.ID(), IsError: true, Error: err.Error(), Reason: "error"}, err
	}
	res, err := ss.Run(ctx, prompt)
	if err != nil {
		return res, classify(err)
	}
	return res, nil
}

// expandCommand turns a prompt that is `/name args` for a registered
// command into the prompt the command gives (a command file of the skills
// row expands its body), its reply's text going to errw; a `/word` that
// names no command is sent as written, so a path stays a prompt. A
// front-end command (/model, /clear, …), or one whose reply has no prompt,
// is a usage error: run has no screen to act on.
func expandCommand(ctx context.Context, host *agentHost, ss *agent.Session, prompt string, errw io.Writer) (string, error) {
	name, args, ok := commands.Parse(prompt)
	if !ok {
		return prompt, nil
	}
	reg, ok := core.Lookup(host.h.Root.Context(), commands.Key)
	if !ok || reg == nil {
		return prompt, nil
	}
	cmd, ok := reg.Lookup(name)
	if !ok {
		return prompt, nil
	}
	if cmd.Run == nil {
		return "", UsageError(fmt.Errorf("/%s is a command of the interactive front ends (harness chat, the terminal UI); run expands only commands that give a prompt, such as command files (docs/skills.md)", name))
	}
	rep, err := cmd.Run(ctx, commands.Invocation{Args: args, Session: ss})
	if err != nil {
		return "", UsageError(fmt.Errorf("/%s: %w", name, err))
	}
	if rep.Text != "" && errw != nil {
		fmt.Fprintf(errw, "harness: %s\n", strings.TrimRight(rep.Text, "\n"))
	}
	if rep.Prompt == "" {
		return "", UsageError(fmt.Errorf("/%s gives no prompt to run", name))
	}
	return rep.Prompt, nil
}

// maxPipedPrompt bounds a prompt read from stdin.
const maxPipedPrompt = 16 << 20

// readPrompt joins args; a single "-" reads the prompt from stdin. When
// stdin is piped (a pipe or a file, not a terminal or /dev/null), its text
// is the prompt, or is put before the arguments' prompt with a blank line
// between, as `claude -p` does.
func readPrompt(stdin io.Reader, args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, maxPipedPrompt))
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		args = []string{string(b)}
	} else if stdinPiped(stdin) {
		b, err := io.ReadAll(io.LimitReader(stdin, maxPipedPrompt))
		if err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		if piped := strings.TrimSpace(string(b)); piped != "" {
			args = append([]string{piped + "\n\n"}, args...)
		}
	}
	prompt := strings.TrimSpace(strings.Join(args, " "))
	if prompt == "" {
		return "", errors.New("no prompt: give it as arguments, pipe it to stdin, or `-` to read it from stdin")
	}
	return prompt, nil
}

// stdinPiped reports whether stdin carries input to read: a pipe or a
// regular file; a terminal or a device such as /dev/null does not. A reader
// that is not a file (a test's) counts as piped.
func stdinPiped(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	if !ok {
		return stdin != nil
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeNamedPipe != 0 || st.Mode().IsRegular()
}
