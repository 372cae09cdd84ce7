package llmopenai

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dshgo/harness/services/llm"
)

// Any split of the arguments into fragments, interleaved in any order
// across calls, assembles to the same calls (provider indices present).
func TestTranslatorReassemblesRandomInterleavings(t *testing.T) {
	want := []llm.ToolCall{
		{ID: "c0", Name: "edit", Arguments: `{"path":"src/main.go","old":"fmt.Println(\"hi\")","new":"log.Print(\"hé\")"}`},
		{ID: "c1", Name: "bash", Arguments: `{"command":"go test ./... && echo ok"}`},
		{ID: "c2", Name: "glob", Arguments: `{"pattern":"**/*.md"}`},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		// Each call: an opening delta (index, id, name) then its fragments.
		type frag struct {
			idx  int
			text string
		}
		queues := make([][]frag, len(want))
		for i, c := range want {
			rest := c.Arguments
			for len(rest) > 0 {
				n := 1 + rng.IntN(min(len(rest), 12))
				queues[i] = append(queues[i], frag{i, rest[:n]})
				rest = rest[n:]
			}
		}
		var a llm.Assembler
		tr := newTranslator(func(c llm.Chunk) bool { a.Add(c); return true })
		opened := make([]bool, len(want))
		for {
			var live []int
			for i := range queues {
				if len(queues[i]) > 0 || !opened[i] {
					live = append(live, i)
				}
			}
			if len(live) == 0 {
				break
			}
			i := live[rng.IntN(len(live))]
			d := wireToolCallDelta{Index: &[]int{i}[0]}
			if !opened[i] {
				opened[i] = true
				d.ID, d.Function.Name = want[i].ID, want[i].Name
			} else {
				text := queues[i][0].text
				queues[i] = queues[i][1:]
				d.Function.Arguments = &text
			}
			var c wireChunk
			c.Choices = make([]wireChoice, 1)
			c.Choices[0].Delta.ToolCalls = []wireToolCallDelta{d}
			tr.add(&c)
		}
		tr.finish = "tool_calls"
		tr.end(nil)
		r := a.Response()
		// Stable indices follow first-seen order, so compare as a set keyed by id.
		got := map[string]llm.ToolCall{}
		for _, c := range r.Message.ToolCalls {
			got[c.ID] = c
		}
		for _, w := range want {
			if !reflect.DeepEqual(got[w.ID], w) {
				t.Fatalf("round %d: call %s = %+v, want %+v", round, w.ID, got[w.ID], w)
			}
		}
	}
}

func FuzzNormalizeArguments(f *testing.F) {
	for _, s := range []string{"", " ", "null", `{}`, `{"a":1}`, `{"x":`, `[1]`, `"s"`, `{}{}`, `{"a":"\u00e9"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		args, reason := llm.NormalizeArguments(raw)
		if reason == "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(args), &m); err != nil {
				t.Fatalf("accepted %q as %q, which is not a JSON object: %v", raw, args, err)
			}
		} else if args != raw {
			t.Fatalf("flagged %q but changed it to %q", raw, args)
		}
	})
}
