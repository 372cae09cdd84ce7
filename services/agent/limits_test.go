package agent_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// procStatus reads one "kB" field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// A model that streams a 50 MB tool-call argument (issue 14: 1.18 GB RSS,
// echoed back in the next request and into the session log): the call
// gets an error result, the argument is not kept, and the process's peak
// RSS grows by less than the argument's size.
func TestHugeToolArgumentIsRefusedWithBoundedMemory(t *testing.T) {
	const size = 50 << 20
	piece := strings.Repeat("a", 64<<10)
	huge := llmtest.Turn{
		Events: []string{llmtest.ToolCallStart(0, "c1", "current_time", `{"text":"`)},
		Generate: func(yield func(string) bool) {
			ev := llmtest.ToolCallArgs(0, piece)
			for range size / len(piece) {
				if !yield(ev) {
					return
				}
			}
			if yield(llmtest.ToolCallArgs(0, `"}`)) {
				yield(llmtest.Finish("tool_calls"))
			}
		},
	}
	f := newFixture(t, []llmtest.Turn{huge, llmtest.Reply("understood")})
	ss := f.open(agent.Options{})

	runtime.GC()
	// Writing 5 to clear_refs resets VmHWM (peak RSS) to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	base := procStatus(t, "VmRSS")
	res, err := ss.Run(context.Background(), "write it")
	peak := procStatus(t, "VmHWM")
	if err != nil || res.Text != "understood" {
		t.Fatalf("run: %v %+v", err, res)
	}
	t.Logf("RSS before %d MiB, peak %d MiB (argument %d MiB)", base>>20, peak>>20, size>>20)
	if grew := peak - base; grew >= size*3/4 {
		t.Fatalf("peak RSS grew by %d MiB for a %d MiB argument: it was held in memory", grew>>20, size>>20)
	}

	w := f.wire(1)
	var call *llmtest.WireToolCall
	var result string
	for i, m := range w.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 {
			call = &w.Messages[i].ToolCalls[0]
		}
		if m.Role == "tool" {
			result = m.Text()
		}
	}
	if call == nil || call.Function.Arguments != "{}" {
		t.Fatalf("next request's tool call = %+v", call)
	}
	want := llm.ArgumentsTooLarge(size+int64(len(`{"text":"`)+2), agent.DefaultMaxToolArgBytes)
	if !strings.Contains(result, want) {
		t.Fatalf("tool result = %q, want it to contain %q", result, want)
	}
	if n := len(f.srv.Requests()[1].Body); n > 64<<10 {
		t.Fatalf("next request is %d bytes: the argument was echoed back", n)
	}
	logs, _ := filepath.Glob(filepath.Join(f.state, "sessions", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v", logs)
	}
	if fi, err := os.Stat(logs[0]); err != nil || fi.Size() > 64<<10 {
		t.Fatalf("session log: %v, %d bytes: the argument was stored", err, fi.Size())
	}
}

// A model that names a tool call with a 1 MiB id (issue 32 item 6): the
// call runs under a short id derived from it ([llm.CapToolCallID]); the
// next request's assistant message and tool result carry that id, not the
// long one, and neither the request nor the session log holds it.
func TestHugeToolCallIDIsReplaced(t *testing.T) {
	long := "id_" + strings.Repeat("x", 1<<20)
	short, n := llm.CapToolCallID(long)
	if n != len(long) || len(short) > llm.MaxToolCallIDBytes || !strings.HasPrefix(short, "call_") {
		t.Fatalf("CapToolCallID = %q, %d", short, n)
	}
	if again, _ := llm.CapToolCallID(long); again != short {
		t.Fatalf("CapToolCallID is not stable: %q then %q", short, again)
	}
	if other, _ := llm.CapToolCallID(long + "y"); other == short {
		t.Fatalf("two long ids map to the same replacement %q", short)
	}
	if kept, n := llm.CapToolCallID("call_ok"); kept != "call_ok" || n != 0 {
		t.Fatalf("a short id was replaced: %q, %d", kept, n)
	}

	f := newFixture(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: long, Name: "current_time", Args: `{}`}),
		llmtest.Reply("done"),
	})
	ss := f.open(agent.Options{})
	res, err := ss.Run(context.Background(), "what time is it")
	if err != nil || res.Text != "done" {
		t.Fatalf("run: %v %+v", err, res)
	}
	w := f.wire(1)
	var callID, resultID string
	for _, m := range w.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 {
			callID = m.ToolCalls[0].ID
		}
		if m.Role == "tool" {
			resultID = m.ToolCallID
		}
	}
	if callID != short || resultID != short {
		t.Fatalf("next request: call id %.40q, result id %.40q; want both %q", callID, resultID, short)
	}
	if n := len(f.srv.Requests()[1].Body); n > 64<<10 {
		t.Fatalf("next request is %d bytes: the long id was echoed back", n)
	}
	logs, _ := filepath.Glob(filepath.Join(f.state, "sessions", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v", logs)
	}
	if fi, err := os.Stat(logs[0]); err != nil || fi.Size() > 64<<10 {
		t.Fatalf("session log: %v, %d bytes: the long id was stored", err, fi.Size())
	}
}
