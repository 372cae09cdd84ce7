package hookstest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/hookstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The script answers by the first matching rule (substrings in order,
// matched literally, quotes included), records every payload, and exits 0
// silently when no rule matches; Mismatch names what differs.
func TestScript(t *testing.T) {
	h := hookstest.NewScript(t,
		hookstest.Rule{Contains: []string{`"trigger":"manual"`, "it's mine"}, Stderr: "no: it's 'quoted'", Exit: 2},
		hookstest.Rule{Contains: []string{`"trigger":"auto"`}, Stdout: `{"decision":"block"}`})
	run := func(in string) (string, string, int) { return runScript(t, h, in) }
	manual := `{"hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"it's mine","cwd":"/w","session_id":"s1","transcript_path":"/t.jsonl"}`
	if o, e, c := run(manual); o != "" || e != "no: it's 'quoted'\n" || c != 2 {
		t.Errorf("manual: %q %q %d", o, e, c)
	}
	if o, e, c := run(`{"trigger":"auto"}`); o != "{\"decision\":\"block\"}\n" || e != "" || c != 0 {
		t.Errorf("auto: %q %q %d", o, e, c)
	}
	if o, e, c := run(`{"custom_instructions":"it's mine","trigger":"manual"}`); o != "" || e != "" || c != 0 {
		t.Errorf("out of order: %q %q %d", o, e, c)
	}
	if got := h.Lines(t); len(got) != 3 || got[0] != manual {
		t.Fatalf("recorded %q", got)
	}
	p := h.PreCompacts(t)
	if bad := p[0].Mismatch("manual", "it's mine", "/w", "s1"); bad != "" {
		t.Errorf("matching payload: %s", bad)
	}
	if bad := p[0].Mismatch("manual", "it's mine", "/w", ""); bad != "" {
		t.Errorf("any session: %s", bad)
	}
	if bad := p[1].Mismatch("auto", "", "/w", ""); !strings.Contains(bad, "custom_instructions missing") || !strings.Contains(bad, "transcript_path missing") {
		t.Errorf("incomplete payload: %q", bad)
	}
	if bad := p[0].Mismatch("auto", "it's mine", "/x", "s1"); !strings.Contains(bad, `trigger "manual"`) || !strings.Contains(bad, `cwd "/w"`) {
		t.Errorf("wrong payload: %q", bad)
	}
}

// runScript runs h with in on its standard input and returns its standard
// output, standard error and exit status.
func runScript(t *testing.T, h *hookstest.Script, in string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Path)
	cmd.Stdin = strings.NewReader(in)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// A rule with LastAssistant answers only when the last assistant line of
// the transcript the payload names holds its substrings; otherwise (other
// text, an older assistant line, no transcript) the next rule answers.
func TestScriptLastAssistantReadsTheTranscript(t *testing.T) {
	h := hookstest.NewScript(t,
		hookstest.Rule{Contains: []string{`"hook_event_name":"Stop"`}, LastAssistant: []string{`"text":"done"`, `"type":"text"`}, Stdout: `{"systemMessage":"finished"}`},
		hookstest.Rule{Contains: []string{`"hook_event_name":"Stop"`}, Stdout: `{"decision":"block"}`})
	tp := filepath.Join(t.TempDir(), "transcript.jsonl")
	stop := `{"hook_event_name":"Stop","transcript_path":"` + tp + `"}`
	for _, tc := range []struct{ name, transcript, want string }{
		{"no transcript", "", `{"decision":"block"}`},
		{"not done", `{"role":"assistant","content":[{"type":"text","text":"working"}]}`, `{"decision":"block"}`},
		{"done, then more", `{"role":"assistant","content":[{"type":"text","text":"done"}]}` + "\n" + `{"role":"user","content":"x"}` + "\n" + `{"role":"assistant","content":[{"type":"text","text":"again"}]}`, `{"decision":"block"}`},
		{"done last", `{"role":"assistant","content":[{"type":"text","text":"working"}]}` + "\n" + `{"role":"user","content":"go on"}` + "\n" + `{"role":"assistant","content":[{"type":"text","text":"done"}]}`, `{"systemMessage":"finished"}`},
	} {
		if tc.transcript != "" {
			if err := os.WriteFile(tp, []byte(tc.transcript+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if o, e, c := runScript(t, h, stop); o != tc.want+"\n" || e != "" || c != 0 {
			t.Errorf("%s: %q %q %d, want %q", tc.name, o, e, c, tc.want)
		}
	}
}
