package tokenmeter_test

import (
	"encoding/json"
	"fmt"

	"github.com/dshgo/harness/services/tokenmeter"
)

// A session projects the next request before it is sent and anchors on the
// provider's usage after it: later requests cost the anchored prompt_tokens
// plus the estimate of what was appended.
func ExampleSession() {
	m := tokenmeter.NewMeter(tokenmeter.Bytes{}, map[string]tokenmeter.Model{"deepseek-chat": {ContextWindow: 128000}})
	s := m.Session("session-1")
	req := tokenmeter.Request{
		Model:    "deepseek-chat",
		System:   "You are terse.",
		Messages: []tokenmeter.Message{{Role: tokenmeter.RoleUser, Content: "hi"}},
	}
	p := s.Project(req)
	fmt.Println(p.Tokens, p.Source)

	var u tokenmeter.Usage
	_ = json.Unmarshal([]byte(`{"prompt_tokens":98716,"completion_tokens":78,"prompt_cache_hit_tokens":98432,"prompt_cache_miss_tokens":284}`), &u)
	rec := s.Record(tokenmeter.Exchange{Request: req, Usage: &u})
	fmt.Printf("context %d, cache hits %.1f%%\n", rec.PromptTokens, 100*rec.CacheHitRatio())

	req.Messages = append(req.Messages,
		tokenmeter.Message{Role: tokenmeter.RoleAssistant, Content: "hello"},
		tokenmeter.Message{Role: tokenmeter.RoleUser, Content: "more"})
	p = s.Project(req)
	fmt.Printf("%d %s %.2f%%\n", p.Tokens, p.Source, p.PercentUsed)
	// Output:
	// 17 estimated
	// context 98716, cache hits 99.7%
	// 98735 usage 77.14%
}
