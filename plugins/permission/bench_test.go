package permission

import (
	"encoding/json"
	"testing"
)

func benchPolicy(b *testing.B) *Policy {
	spec := defaultSpec(b.TempDir())
	spec.Allow = []string{"bash(git *)", "bash(go test *)", "bash(echo *)", "write(src/**)"}
	spec.Ask = []string{"edit"}
	spec.Deny = []string{"bash(rm -rf *)", "read(**/.env)"}
	p, err := New(spec)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkEvaluate(b *testing.B) {
	p := benchPolicy(b)
	cases := []struct {
		name string
		call Call
	}{
		{"bash-simple", Call{Tool: "bash", Args: bashArgs("git status")}},
		{"bash-compound", Call{Tool: "bash", Args: bashArgs("git add . && go test ./... | tee log; echo done > out.txt")}},
		{"file", Call{Tool: "write", Args: fileArgs("src/pkg/a.go")}},
		{"mcp-path", Call{Tool: "mcp__fs__read_text_file", ReadOnly: true, Args: json.RawMessage(`{"path":"src/pkg/a.go"}`)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Evaluate(c.call)
			}
		})
	}
}
