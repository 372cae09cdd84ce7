package toolbash

import "testing"

func ip(n int) *int       { return &n }
func sp(s string) *string { return &s }

func TestRenderMarkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"exit 0 stdout only", Value{ExitCode: ip(0), Stdout: Stream{Text: "hi\n"}}, "hi\n"},
		{"no output", Value{ExitCode: ip(0)}, "(no output)"},
		{"non-zero exit, no output", Value{ExitCode: ip(3)}, "(no output)\n[exit code: 3]"},
		{"stderr after stdout without newline", Value{ExitCode: ip(1), Stdout: Stream{Text: "out"}, Stderr: Stream{Text: "err\n"}},
			"out\n[stderr]\nerr\n[exit code: 1]"},
		{"stderr only", Value{ExitCode: ip(0), Stderr: Stream{Text: "warn"}}, "[stderr]\nwarn"},
		{"timeout then signal", Value{Signal: sp("SIGTERM"), TimedOut: true, TimeoutMs: 1000, Stdout: Stream{Text: "start\n"}},
			"start\n[timed out after 1000ms]\n[killed by signal: SIGTERM]"},
		{"timeout with a trapped exit 0", Value{ExitCode: ip(0), TimedOut: true, TimeoutMs: 5}, "(no output)\n[timed out after 5ms]"},
		{"self-kill", Value{Signal: sp("SIGKILL")}, "(no output)\n[killed by signal: SIGKILL]"},
		{"truncated with head and spill", Value{ExitCode: ip(0), Stdout: Stream{Head: "head\n", Text: "tail\n", Truncated: true, SpillPath: "/s/out.log", OmittedBytes: 100, OmittedLines: 7}},
			"head\n[… 100 bytes (7 lines) omitted …]\ntail\n\n[output truncated; full output: /s/out.log]"},
		{"truncated over the spill cap", Value{ExitCode: ip(2), Stdout: Stream{Text: "tail", Truncated: true, OmittedBytes: 9, OmittedLines: -1, SpillCapped: true}},
			"[… 9 bytes omitted; the output exceeded the spill cap and was not saved …]\ntail\n[output truncated; full output: (unavailable)]\n[exit code: 2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.v); got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
