// Package compaction is the context-compaction service: when a session's
// next request would pass a share of the model's context window (or on
// demand), the older part of the history is replaced by a summary the
// model writes, and the recent turns stay verbatim.
//
// The service owns the policy and the bookkeeping; the agent owns the
// session. Per compaction the agent asks:
//
//	Due(tokens, window)            is the projected request over Threshold?
//	Cut(history, price, window)    where the verbatim tail starts
//	Summarize(ctx, route, older)   the summary (one model call, no tools)
//
// and appends a "compaction" record to the session log (the log stays
// append-only: nothing earlier is rewritten; replaying it rebuilds the
// compacted view exactly).
//
// Rules the cut keeps (each tested): an assistant message with tool calls
// is never separated from any of its results — the tail never starts with
// a tool result, so every call in the tail has its results after it and
// every result its call before it; messages are kept whole, so DeepSeek
// thinking-mode turns in the tail keep their reasoning_content.
package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
)

// Key is the compaction service.
var Key = core.NewKey[*Service]("compaction")

// Plugin provides the compaction service. It waits for the llm service.
var Plugin = core.Define("compaction", apply,
	core.WithInject(llm.Key.Name()),
	core.WithProvides(Key.Name()),
	core.WithDescription("context compaction: older history replaced by a model-written summary near the context window's limit"))

// Config is the compaction plugin's configuration.
type Config struct {
	// Threshold is the share of the context window past which the next
	// request triggers a compaction (default 0.8).
	Threshold float64 `yaml:"threshold" jsonschema:"exclusiveMinimum=0,maximum=1,default=0.8"`
	// KeepRecent is the share of the context window kept verbatim at the
	// end of the history (default 0.25).
	KeepRecent float64 `yaml:"keepRecent" jsonschema:"minimum=0,exclusiveMaximum=1,default=0.25"`
	// Prompt is the summarizer's instruction; empty uses DefaultPrompt.
	// Instruction given to the model that writes the summary (default: a built-in
	// prompt).
	Prompt string `yaml:"prompt"`
	// MaxResultBytes bounds each tool result in the transcript sent to the
	// summarizer (default 2000; the rest is elided with a note).
	MaxResultBytes int `yaml:"maxResultBytes" jsonschema:"minimum=100,default=2000"`
	// Auto compacts automatically at Threshold (default true); false keeps
	// only on-demand compaction and CONTEXT_LENGTH recovery.
	Auto bool `yaml:"auto" jsonschema:"default=true"`
}

// SetDefaults sets the defaults.
func (c *Config) SetDefaults() {
	c.Threshold, c.KeepRecent, c.MaxResultBytes, c.Auto = 0.8, 0.25, 2000, true
}

// Validate checks the bounds.
func (c Config) Validate() error {
	var issues []core.Issue
	if c.Threshold <= 0 || c.Threshold > 1 {
		issues = append(issues, core.Issue{Path: "threshold", Message: fmt.Sprintf("must be in (0, 1], got %g", c.Threshold)})
	}
	if c.KeepRecent < 0 || c.KeepRecent >= 1 {
		issues = append(issues, core.Issue{Path: "keepRecent", Message: fmt.Sprintf("must be in [0, 1), got %g", c.KeepRecent)})
	}
	if c.MaxResultBytes < 100 {
		issues = append(issues, core.Issue{Path: "maxResultBytes", Message: "must be at least 100"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Issues: issues}
	}
	return nil
}

// DefaultPrompt is the summarizer's default instruction.
const DefaultPrompt = `You are compacting the history of a coding-agent session so the work can continue in a fresh context window. Write a summary that lets the agent carry on without the original messages:
1. The user's requests and goals, in their own words where it matters, and any constraints or preferences they stated.
2. What has been done: files read, created or changed (with paths), commands run and their outcomes, decisions taken and why.
3. Errors met and how they were fixed, or that they remain.
4. The current state and the exact next steps; open questions.
Be specific (paths, names, numbers); leave out pleasantries and anything superseded. Write plain text, no preamble.`

// SummaryPrefix starts the user message that replaces the summarized part.
const SummaryPrefix = "[This session was compacted: the earlier conversation is replaced by this summary. Continue the work from here.]\n\n"

// Service decides when and where to compact and writes summaries.
type Service struct {
	cfg Config
	llm *llm.Service
}

func apply(c *core.Context, cfg Config) error {
	return core.Provide(c, Key, New(cfg, core.Use(c, llm.Key)))
}

// New returns a service with cfg (defaults must be set) over l (may be nil
// for Cut and Due only).
func New(cfg Config, l *llm.Service) *Service { return &Service{cfg: cfg, llm: l} }

// Config returns the configuration.
func (s *Service) Config() Config { return s.cfg }

// Due reports whether a request projected at tokens passes the threshold
// of a window (in tokens); false when the window is unknown or Auto is off.
func (s *Service) Due(tokens, window int) bool {
	return s.cfg.Auto && window > 0 && float64(tokens) > s.cfg.Threshold*float64(window)
}

// Cut returns where the verbatim tail of history starts: history[:cut] is
// summarized, history[cut:] kept. The tail holds the most recent messages
// whose prices (price(i) tokens for message i) fit KeepRecent×window,
// moved later as needed so that it does not start with a tool result. 0
// means there is nothing to summarize. It never separates a tool call from
// its results (see [Paired]).
func (s *Service) Cut(history []llm.Message, price func(i int) int, window int) int {
	budget := int(s.cfg.KeepRecent * float64(window))
	cut, used := len(history), 0
	for cut > 0 {
		p := price(cut - 1)
		if used+p > budget {
			break
		}
		used += p
		cut--
	}
	for cut < len(history) && history[cut].Role == llm.RoleTool {
		cut++
	}
	return cut
}

// ErrNothingToCompact is returned when the history has nothing to summarize.
var ErrNothingToCompact = errors.New("nothing to compact")

// Summarize asks the model on route to summarize older (the part of the
// history being replaced; it may start with an earlier summary). The
// request carries no tools: the conversation is sent as one transcript,
// tool results cut to MaxResultBytes. instructions, when not empty, are
// added to the prompt (`/compact focus on the API`). It returns the text
// of the summary message (SummaryPrefix + the model's summary).
func (s *Service) Summarize(ctx context.Context, route string, older []llm.Message, instructions string) (string, error) {
	if len(older) == 0 {
		return "", ErrNothingToCompact
	}
	if s.llm == nil {
		return "", errors.New("compaction: no llm service")
	}
	prompt := s.cfg.Prompt
	if prompt == "" {
		prompt = DefaultPrompt
	}
	if strings.TrimSpace(instructions) != "" {
		prompt += "\n\nAdditional instructions for this summary: " + strings.TrimSpace(instructions)
	}
	req := llm.Request{Model: route, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: prompt},
		{Role: llm.RoleUser, Content: Transcript(older, s.cfg.MaxResultBytes)},
	}}
	var asm llm.Assembler
	for c := range s.llm.Stream(ctx, req) {
		asm.Add(c)
	}
	resp := asm.Response()
	if resp.Err != nil {
		return "", fmt.Errorf("compaction summary: %w", resp.Err)
	}
	text := strings.TrimSpace(resp.Message.Content)
	if text == "" {
		return "", errors.New("compaction summary: the model returned no text")
	}
	return SummaryPrefix + text, nil
}

// Transcript renders messages as the summarizer's input: one block per
// message ("## user", "## assistant", "## tool result (name)"), tool calls
// with their arguments, tool results cut to maxResult bytes.
func Transcript(msgs []llm.Message, maxResult int) string {
	var b strings.Builder
	b.WriteString("Summarize this conversation (oldest first):\n")
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			fmt.Fprintf(&b, "\n## tool result (%s, call %s)\n%s\n", m.Name, m.ToolCallID, clip(m.Content, maxResult))
		default:
			fmt.Fprintf(&b, "\n## %s\n", m.Role)
			if m.Content != "" {
				b.WriteString(m.Content)
				b.WriteByte('\n')
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "[tool call %s %s %s]\n", tc.ID, tc.Name, clip(tc.Arguments, maxResult))
			}
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes elided]", len(s)-cut)
}

// Paired checks the tool-call pairing of a request's messages: every tool
// result follows the assistant message that made its call (with only tool
// results between), and every call has exactly one result. It returns an
// error naming the first violation.
func Paired(msgs []llm.Message) error {
	open := map[string]bool{} // calls of the last assistant message awaiting results
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: tool result %q without its call before it", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				return fmt.Errorf("message %d: %d tool call(s) of the previous assistant message have no result", i, len(open))
			}
			if m.Role == llm.RoleAssistant {
				for _, tc := range m.ToolCalls {
					open[tc.ID] = true
				}
			}
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the last assistant message has %d tool call(s) without results", len(open))
	}
	return nil
}
