package tui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// answererPlugin is a plugin providing a under tools.AnswererKey for as
// long as the UI runs.
func answererPlugin(a *answerer) core.Plugin {
	return core.Define("tui-approval", func(c *core.Context, _ struct{}) error {
		return core.Provide[tools.Answerer](c, tools.AnswererKey, a)
	}, core.WithProvides(tools.AnswererKey.Name()))
}

// answerer puts approval questions to the UI: each becomes an approvalMsg
// whose reply channel the modal answers.
type answerer struct {
	send func(tea.Msg)
	seq  atomic.Int64
}

var _ tools.DetailedAnswerer = (*answerer)(nil)

// approvalMsg is one question; reply gets exactly one answer.
type approvalMsg struct {
	id    int64
	req   tools.ApprovalRequest
	reply chan tools.ApprovalAnswer
	card  *toolCard // the call's card (its presentation), when the transcript has it
}

// approvalGoneMsg withdraws a question whose context ended.
type approvalGoneMsg struct{ id int64 }

// Answer implements tools.Answerer.
func (a *answerer) Answer(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	ans, err := a.AnswerDetailed(ctx, req)
	return ans.Outcome, err
}

// AnswerDetailed shows the modal and waits for the user or ctx.
func (a *answerer) AnswerDetailed(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	msg := approvalMsg{id: a.seq.Add(1), req: req, reply: make(chan tools.ApprovalAnswer, 1)}
	a.send(msg)
	select {
	case ans := <-msg.reply:
		return ans, nil
	case <-ctx.Done():
		go a.send(approvalGoneMsg{id: msg.id})
		return tools.ApprovalAnswer{Outcome: tools.ApprovalCancelled}, nil
	}
}

// The modal's choices, in order.
const (
	approvalOnce = iota
	approvalAlways
	approvalNo
	approvalWhy
)

// approvalModal is the question on screen, plus any queued behind it.
type approvalModal struct {
	cur    approvalMsg
	queue  []approvalMsg
	choice int
	why    *textinput.Model // the reason being typed ("no, and tell the model why")
}

func newApprovalModal(msg approvalMsg, prev *approvalModal) *approvalModal {
	if prev != nil {
		prev.queue = append(prev.queue, msg)
		return prev
	}
	return &approvalModal{cur: msg}
}

// drop withdraws question id; the modal closes when none is left.
func (a *approvalModal) drop(id int64) *approvalModal {
	if a.cur.id == id {
		return a.advance()
	}
	for i, q := range a.queue {
		if q.id == id {
			a.queue = append(a.queue[:i], a.queue[i+1:]...)
			break
		}
	}
	return a
}

// advance moves to the next queued question (nil: none).
func (a *approvalModal) advance() *approvalModal {
	if len(a.queue) == 0 {
		return nil
	}
	return &approvalModal{cur: a.queue[0], queue: a.queue[1:]}
}

// answer replies to the current question.
func (a *approvalModal) answer(choice int, why string) {
	out := tools.ApprovalAnswer{Outcome: tools.ApprovalRejected}
	switch choice {
	case approvalOnce:
		out.Outcome = tools.ApprovalAllowedOnce
	case approvalAlways:
		out.Outcome = tools.ApprovalAllowedAlways
	case approvalWhy:
		out.Reason = why
	}
	a.cur.reply <- out
}

// answerAll rejects every question (Ctrl+C).
func (a *approvalModal) answerAll(choice int, why string) {
	a.answer(choice, why)
	for _, q := range a.queue {
		q.reply <- tools.ApprovalAnswer{Outcome: tools.ApprovalRejected}
	}
}

func (a *approvalModal) paste(s string) tea.Cmd {
	if a.why != nil {
		a.why.SetValue(a.why.Value() + strings.ReplaceAll(s, "\n", " "))
	}
	return nil
}

// key handles a key in the modal. Shortcuts: y, a, n, r; arrows and Enter;
// Esc is "no" (or leaves the reason field).
func (m *Model) approvalKey(k tea.KeyPressMsg) tea.Cmd {
	a := m.modal
	if a.why != nil {
		switch k.String() {
		case "esc":
			a.why = nil
			return nil
		case "enter":
			a.answer(approvalWhy, a.why.Value())
			m.modal = a.advance()
			return nil
		}
		var cmd tea.Cmd
		*a.why, cmd = a.why.Update(k)
		return cmd
	}
	choice := -1
	switch k.String() {
	case "up", "left", "shift+tab":
		a.choice = (a.choice + 3) % 4
	case "down", "right", "tab":
		a.choice = (a.choice + 1) % 4
	case "y", "1":
		choice = approvalOnce
	case "a", "2":
		choice = approvalAlways
	case "n", "3", "esc":
		choice = approvalNo
	case "r", "4":
		choice = approvalWhy
	case "enter":
		choice = a.choice
	}
	switch choice {
	case -1:
		return nil
	case approvalWhy:
		ti := textinput.New()
		ti.Placeholder = "tell the model why (Enter sends, Esc goes back)"
		ti.SetWidth(max(10, m.w-8))
		cmd := ti.Focus()
		a.why, a.choice = &ti, approvalWhy
		return cmd
	}
	a.answer(choice, "")
	m.modal = a.advance()
	return nil
}

// maxReasonLines bounds the approval modal's wrapped reason.
const maxReasonLines = 4

// view renders the modal: what asks, the diff or the command, the choices.
func (a *approvalModal) view(m *Model) []string {
	r := a.cur.req
	w := m.w - 4
	var body []string
	lb := r.Labels
	if lb == nil {
		lb = &tools.ApprovalLabels{}
	}
	title := m.th.warn.Render(cmp.Or(lb.Title, "Allow "+r.Tool+"?"))
	if n := len(a.queue); n > 0 {
		title += m.th.dim.Render(fmt.Sprintf("  (+%d waiting)", n))
	}
	body = append(body, title)
	why := r.DisplayReason
	if why == "" {
		why = r.Reason
	}
	if why != "" { // wrapped, not cut: the rule it names is often at the end
		lines := wrapLines(visible(why), w)
		if len(lines) > maxReasonLines {
			lines = append(lines[:maxReasonLines-1:maxReasonLines-1], ansi.Truncate(strings.Join(lines[maxReasonLines-1:], " "), w, "…"))
		}
		for _, l := range lines {
			body = append(body, m.th.dim.Render(l))
		}
	}
	maxBody := max(3, m.h-14)
	// What the call would do, from its presentation: the diff, else its
	// text (a command), else its raw input.
	switch c := a.cur.card; {
	case c != nil && len(c.diff) > 0:
		body = append(body, m.tr.diffLines(c.diff, w, maxBody)...)
	case c != nil && c.output() != "":
		body = append(body, textLines(c.output(), w, maxBody)...)
	case c != nil && len(c.pres.RawInput) > 0:
		body = append(body, rawLines(c.pres.RawInput, w, maxBody)...)
	default:
		body = append(body, textLines(r.Arguments, w, maxBody)...)
	}
	always := "Yes, and don't ask again for this exact call"
	if len(r.AlwaysRules) > 0 {
		always = "Yes, and don't ask again for " + strings.Join(r.AlwaysRules, ", ")
	}
	choices := []string{cmp.Or(lb.Once, "Yes, once"), cmp.Or(lb.Always, always), cmp.Or(lb.No, "No"), cmp.Or(lb.NoWhy, "No, and tell the model why")}
	keys := []string{"y", "a", "n", "r"}
	for i, c := range choices {
		line := fmt.Sprintf("[%s] %s", keys[i], ansi.Truncate(visible(c), w-6, "…"))
		if i == a.choice {
			line = m.th.chosen.Render("› " + line)
		} else {
			line = "  " + line
		}
		body = append(body, line)
	}
	if a.why != nil {
		body = append(body, "  "+a.why.View())
	}
	box := m.th.modal.Width(m.w).Render(strings.Join(body, "\n"))
	return strings.Split(box, "\n")
}

// rawLines shows a presentation's raw input re-indented (its JSON text
// laid out, not decoded), at most n lines.
func rawLines(raw json.RawMessage, w, n int) []string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return textLines(string(raw), w, n)
	}
	return textLines(b.String(), w, n)
}

// textLines shows text indented, at most n lines.
func textLines(text string, w, n int) []string {
	lines := strings.Split(text, "\n")
	var out []string
	for i, l := range lines {
		if i == n {
			out = append(out, fmt.Sprintf("  … %d more lines", len(lines)-n))
			break
		}
		out = append(out, "  "+ansi.Truncate(visible(l), w-2, "…"))
	}
	return out
}
