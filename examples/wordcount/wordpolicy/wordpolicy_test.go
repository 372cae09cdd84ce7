package wordpolicy_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	_ "example.com/wordcount/wordcount"  // registers tool-word-count
	_ "example.com/wordcount/wordpolicy" // registers word-count-policy
	"github.com/dshgo/harness"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const rows = `plugins:
  - {id: prompt, name: systemprompt}
  - {id: tools, name: tools}
  - {id: word-count, name: tool-word-count}
  - id: policy
    name: word-count-policy
    config: {forbidden: [classified], maxWords: 5}
`

// The policy judges decoded arguments, so a JSON escape does not smuggle a
// forbidden word past it.
func TestPolicyDeniesOnDecodedArguments(t *testing.T) {
	h := harnesstest.Start(t, rows)
	reg := harnesstest.Service(t, h, tools.Key)
	for _, tc := range []struct{ args, want string }{
		{`{"text":"an open text"}`, "3"},
		{`{"text":"a classified text"}`, `Error: the text contains the forbidden word "classified"`},
		{`{"text":"a \u0063lassified text"}`, `Error: the text contains the forbidden word "classified"`},
		{`{"text":"one two three four five six"}`, "Error: the text has 6 words; the limit is 5"},
	} {
		out := reg.Execute(context.Background(), tools.Call{Name: "word_count", Arguments: tc.args})
		if got := tools.TextOf(out.Content); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A bad config fails the boot with an error naming the file, line and
// column of the value and the field.
func TestBootFailsForABadConfig(t *testing.T) {
	h, err := harness.New(harness.WithManifest([]byte(`plugins:
  - {id: prompt, name: systemprompt}
  - {id: tools, name: tools}
  - id: policy
    name: word-count-policy
    config:
      maxWords: 0
`)))
	if err == nil {
		err = h.Start(context.Background())
		_ = h.Stop(context.Background())
	}
	want := `harness.yml:7:17: plugin "word-count-policy" (id policy): invalid config: maxWords: must be at least 1`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}
