package spillpolicy

import (
	"context"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/tools"
)

// DefaultMaxInlineBytes is the cap the shipped default manifest sets
// (dsh's base bundle sets the same value). The plugin itself has no default.
const DefaultMaxInlineBytes = 50_000

// DefaultOwner is the spill owner of calls made outside any session scope
// (for example `harness tool`).
const DefaultOwner = spill.DefaultOwner

// Config is the spill-policy plugin's configuration.
type Config struct {
	// MaxInlineBytes caps a plain-text tool result in UTF-8 bytes; larger
	// results are spilled and previewed within this cap. Omitted or 0: the
	// plugin registers nothing (reference B3: a true no-op).
	// Largest tool result (bytes) kept inline; larger ones are spilled. Omitted
	// or 0: the policy is off (the default manifest sets 50000).
	MaxInlineBytes int `yaml:"maxInlineBytes" json:"maxInlineBytes,omitempty" jsonschema:"minimum=0"`
}

// Validate rejects a negative cap with dsh's words (reference B3):
// `maxInlineBytes must be a non-negative integer (got N)`.
func (c *Config) Validate() error {
	if c.MaxInlineBytes < 0 {
		return fmt.Errorf("maxInlineBytes must be a non-negative integer (got %d)", c.MaxInlineBytes)
	}
	return nil
}

// Plugin is spill-policy. It injects the tools service; the spill store is
// looked up per call, so the policy degrades (keeps results inline, with a
// warning) while no store is mounted.
var Plugin = core.Define("spill-policy", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("spills oversized tool results to the spill store and shows a head/tail preview with the locator"))

func apply(c *core.Context, cfg Config) error {
	if cfg.MaxInlineBytes == 0 {
		return nil
	}
	p := &policy{c: c, cap: cfg.MaxInlineBytes}
	return core.On(c, tools.PostExecute, p.postExecute, core.Prepend(), core.Global())
}

type policy struct {
	c   *core.Context
	cap int
}

// postExecute lets the rest of the chain decide, then bounds what it
// accepted. It never returns an error of its own.
func (p *policy) postExecute(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
	d, err := next(ctx, e)
	if err != nil || d.Kind != tools.PostAccept || d.ReplaceValue || e.Parent() != nil || e.Name() == "read" {
		return d, err
	}
	content := d.Content
	if content == nil && e.Outcome() != nil {
		content = e.Outcome().Content
	}
	text, ok := plainText(content)
	if !ok || len(text) <= p.cap {
		return d, nil
	}
	replacement, ok := p.spill(ctx, e, text)
	if !ok {
		return d, nil
	}
	d.Content = []tools.Content{tools.Text(replacement)}
	return d, nil
}

// spill saves text and returns its preview, or false (after logging a
// warning) when the original must stay inline.
func (p *policy) spill(ctx context.Context, e *tools.Execution, text string) (string, bool) {
	log := p.c.Logger().With("tool", e.Name(), "callId", e.CallID(), "bytes", len(text))
	store, ok := core.Lookup(p.c, spill.Key)
	if !ok {
		log.Warn("spill-policy: no spill store is mounted; keeping the result inline")
		return "", false
	}
	ref, err := store.SaveText(ctx, spill.SaveRequest{
		Owner:         spill.Owner{SessionID: owner(e)},
		Source:        spill.Source{Kind: spill.SourceTool, ToolName: e.Name(), CallID: e.CallID(), Label: "result"},
		SuggestedName: e.Name() + ".txt",
		Content:       text,
	})
	if err != nil {
		log.Warn("spill-policy: saving the result failed; keeping it inline", "err", err)
		return "", false
	}
	out, ok := Preview(text, p.cap, ref)
	if !ok {
		log.Warn("spill-policy: the notice does not fit maxInlineBytes; keeping the result inline", "locator", ref.Locator)
		return "", false
	}
	return out, true
}

// SessionScopePrefix opens the label of an agent session's scope.
const SessionScopePrefix = spill.SessionScopePrefix

// owner is the session a call belongs to (reference B3: the session id),
// see [spill.OwnerOf].
func owner(e *tools.Execution) string { return spill.OwnerOf(e.Scope()) }

// plainText joins text blocks; false when any block is not text.
func plainText(content []tools.Content) (string, bool) {
	if len(content) == 1 && content[0].Type == "text" {
		return content[0].Text, true
	}
	var b strings.Builder
	for _, c := range content {
		if c.Type != "text" {
			return "", false
		}
		b.WriteString(c.Text)
	}
	return b.String(), true
}
