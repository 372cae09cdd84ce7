package agent

import (
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tokenmeter"
)

// meterRecord records one model call in the token meter when one is
// mounted (optional service "tokenMeter"): it anchors the meter on the
// provider's usage or, without usage, records the meter's estimate. It
// returns the meter's figures for the call, or nil without a meter.
func (t *turn) meterRecord(req llm.Request, resp llm.Response) *tokenmeter.RequestRecord {
	m, ok := core.Lookup(t.ss.svc.c, tokenmeter.Key)
	if !ok {
		return nil
	}
	s := m.Session(t.ss.id)
	if t.ss.model.ContextWindow > 0 {
		s.SetContextWindow(int(t.ss.model.ContextWindow))
	}
	mreq := meterRequest(req)
	mreq.Model = t.ss.model.Name // the meter knows models by bare name
	x := tokenmeter.Exchange{Request: mreq, Reply: meterMessage(resp.Message)}
	if resp.UsageReported {
		x.Usage = meterUsage(resp.Usage)
	}
	rec := s.Record(x)
	return &rec
}

func meterRequest(req llm.Request) tokenmeter.Request {
	out := tokenmeter.Request{Model: req.Model, Messages: make([]tokenmeter.Message, 0, len(req.Messages))}
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			out.System = m.Content
			continue
		}
		out.Messages = append(out.Messages, meterMessage(m))
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, tokenmeter.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

func meterMessage(m llm.Message) tokenmeter.Message {
	out := tokenmeter.Message{Role: tokenmeter.Role(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, tokenmeter.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	return out
}

// meterUsage writes llm.Usage in the wire shape the meter reads (DeepSeek
// cache fields; reasoning inside completion).
func meterUsage(u llm.Usage) *tokenmeter.Usage {
	hit, miss := int(u.CacheHitTokens), int(u.CacheMissTokens)
	out := &tokenmeter.Usage{PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens)}
	if hit+miss > 0 {
		out.PromptCacheHitTokens, out.PromptCacheMissTokens = &hit, &miss
	}
	if u.ReasoningTokens > 0 {
		r := int(u.ReasoningTokens)
		out.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens,omitempty"`
		}{ReasoningTokens: r}
	}
	return out
}
