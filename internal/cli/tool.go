package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/services/tools"
	"github.com/spf13/cobra"
)

// toolReport is the --json shape of `harness tool`.
type toolReport struct {
	Content []tools.Content  `json:"content"`
	IsError bool             `json:"isError"`
	Error   *tools.ErrorInfo `json:"error,omitempty"`
	Meta    json.RawMessage  `json:"meta,omitempty"`
}

// errToolFailed makes the command exit 1 after printing an error result; the
// result itself is the message, so nothing more is printed.
var errToolFailed = errors.New("the tool call returned an error result")

// toolCommand builds `harness tool`.
func toolCommand(env *Env) *cobra.Command {
	var (
		asJSON       bool
		permMode     string
		allowedTools []string
	)
	cmd := &cobra.Command{
		Use:   "tool NAME ['JSON-ARGS']",
		Short: "Run one tool call through the whole pipeline of the configured harness",
		Long: "tool boots the configured harness and runs NAME with the JSON arguments (default {})\n" +
			"through the registry's full pipeline: validation, pre-execute policy, approval, guards,\n" +
			"the body, post-execute policy. It prints the model-facing content; --json prints\n" +
			`{"content":[...],"isError":bool,"error":{"name","code","reason"},"meta":...}.` + "\n" +
			"Exit 0 for a success result, 1 for an error result, 2 for usage errors.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return UsageError(fmt.Errorf("tool takes NAME and optional 'JSON-ARGS', got %d argument(s)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			call := tools.Call{ID: "cli", Name: args[0]}
			if len(args) == 2 {
				call.Arguments = args[1]
			}
			mode, allow, err := permissionFlags(permMode, allowedTools)
			if err != nil {
				return UsageError(err)
			}
			var opts []BootOption
			permRow := false
			if mode != "" || len(allow) > 0 {
				opts = append(opts, withPermissions(mode, allow, &permRow))
			}
			var o *tools.Outcome
			err = withRegistry(env, func(ctx context.Context, h *fxcore.Harness, reg *tools.Registry) error {
				if len(opts) > 0 && !permRow {
					return UsageError(errPermFlagsNeedRow)
				}
				awaitMCPTool(ctx, h, call.Name) // only an mcp__SERVER__ tool waits, for its server
				o = reg.Execute(ctx, call)
				return nil
			}, opts...)
			if err != nil {
				return err
			}
			return printOutcome(env, o, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&permMode, "permission-mode", "", "permission `MODE` for this call: default, acceptEdits, plan, bypass or dontAsk (sets the permission row's mode)")
	cmd.Flags().StringArrayVar(&allowedTools, "allowed-tools", nil, "allow `RULES` without asking, e.g. 'Bash(git diff *) Read' (separated by commas or spaces; appended to the permission row's allow list)")
	return cmd
}

// printOutcome prints a tool outcome as `harness tool` does (text, or
// --json) and makes an error result exit 1.
func printOutcome(env *Env, o *tools.Outcome, asJSON bool) error {
	if asJSON {
		content := o.Content
		if content == nil {
			content = []tools.Content{}
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(toolReport{Content: content, IsError: o.IsError, Error: o.Error, Meta: o.Meta}); err != nil {
			return Failure(err)
		}
	} else {
		text := tools.TextOf(o.Content)
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		fmt.Fprint(env.Stdout, text)
	}
	noteDeletedSpills(env, tools.TextOf(o.Content))
	if o.IsError {
		return &ExitError{Code: ExitFailure, Err: errToolFailed}
	}
	return nil
}

// spillNotice matches the spill policy's notice in a result.
var spillNotice = regexp.MustCompile(`Full formatted result stored at: (\S+?)\. |\[output truncated; full output: ([^\s\]]+)\]`)

// noteDeletedSpills tells the user on stderr when a result names a spill
// file that no longer exists: spill-local deletes a run's files when the
// harness stops unless its config says keep: true (bug case B25), and a
// one-shot `harness tool` run stops right after the call.
func noteDeletedSpills(env *Env, text string) {
	for _, m := range spillNotice.FindAllStringSubmatch(text, -1) {
		path := m[1] + m[2]
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(env.Stderr, "harness: note: %s was deleted when the harness stopped; set keep: true in the spill-local row's config (or apply a --patch) to keep spill files after exit\n", path)
		}
	}
}
