package permission

import (
	"encoding/json"
	"slices"
	"testing"
)

// web_fetch(domain:HOST) rules match the host of web_fetch's url; deny
// wins, a glob covers subdomains, and an ask suggests the domain rule.
func TestWebFetchDomainRulesMatchTheURLsHost(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.URLTools = map[string]string{"web_fetch": "url"}
	spec.Allow = []string{"web_fetch(domain:docs.example.com)", "web_fetch(domain:*.go.dev)"}
	spec.Deny = []string{"web_fetch(domain:evil.example)"}
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		want Decision
		rule string
	}{
		{"https://docs.example.com/a?b=1", Allow, ""},
		{"https://DOCS.example.com./x", Allow, ""},
		{"https://pkg.go.dev/net/http", Allow, ""},
		{"https://go.dev/", Ask, ""},
		{"https://docs.example.com.evil.example/", Ask, ""},
		{"http://evil.example:8080/docs.example.com", Deny, "web_fetch(domain:evil.example)"},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"url": tt.url})
		got := p.Evaluate(Call{Tool: "web_fetch", Args: args})
		if got.Decision != tt.want || got.Rule != tt.rule {
			t.Errorf("%s: %v by %q, want %v by %q", tt.url, got.Decision, got.Rule, tt.want, tt.rule)
		}
	}
	got := p.Evaluate(Call{Tool: "web_fetch", Args: json.RawMessage(`{"url":"https://other.example/p"}`)})
	if got.Decision != Ask || !slices.Equal(got.Suggestions, []string{"web_fetch(domain:other.example)"}) {
		t.Errorf("unlisted host: %v, suggestions %q", got.Decision, got.Suggestions)
	}
}
