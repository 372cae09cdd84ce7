package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/pgtest"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// outcomeModel is the scripted model of the outcome tests. A prompt
// "job N fail K STATUS" answers its first K requests with HTTP STATUS,
// then "done N"; "job N drop" streams a word and cuts the connection on
// its first request; "job N stall" streams a word and then nothing on its
// first request (until the client goes away); anything else, "done N".
// Requests are counted per prompt (n).
type outcomeModel struct {
	srv *llmtest.Server
	mu  sync.Mutex
	n   map[string]int
}

func newOutcomeModel(t testing.TB) *outcomeModel {
	m := &outcomeModel{n: map[string]int{}}
	re := regexp.MustCompile(`^job (\d+)(?: (fail|drop|stall) ?(\d+)? ?(\d+)?)?$`)
	check := func(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
		prompt, _ := promptOf(w)
		m.mu.Lock()
		m.n[prompt]++
		n := m.n[prompt]
		m.mu.Unlock()
		g := re.FindStringSubmatch(prompt)
		var tt llmtest.Turn
		switch {
		case g == nil:
			tt = llmtest.Error(400, "unexpected prompt "+prompt)
		case g[2] == "fail":
			k, _ := strconv.Atoi(g[3])
			status, _ := strconv.Atoi(g[4])
			if n <= k {
				tt = llmtest.Error(status, fmt.Sprintf("scripted %d", status))
				break
			}
			tt = text("done " + g[1])
		case g[2] == "drop" && n == 1:
			tt = llmtest.Turn{Events: []string{llmtest.TextDelta("partial ")}, Drop: true}
		case g[2] == "stall" && n == 1:
			tt = llmtest.Turn{Events: []string{llmtest.TextDelta("thinking ")}, Stall: true}
		default:
			tt = text("done " + g[1])
		}
		return &tt
	}
	m.srv = llmtest.New(t, nil, llmtest.WithCheck(check))
	return m
}

func (m *outcomeModel) requests(prompt string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[prompt]
}

// newOutcomeFleet is newFleet over model.
func newOutcomeFleet(t testing.TB, model *outcomeModel, schemaPrefix, workerExtra string) *fleet {
	t.Helper()
	f := &fleet{srv: model.srv, dir: t.TempDir(), workRoot: t.TempDir(), cfg: filepath.Join(t.TempDir(), "harness.yml")}
	f.dsn, f.schema = pgtest.Schema(t, schemaPrefix)
	f.m = fleetManifest(f.srv.URL, f.dsn, f.schema, f.workRoot, workerExtra)
	if err := os.WriteFile(f.cfg, []byte(f.m), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// shownJob is what the outcome tests read of `jobs show --json`.
type shownJob struct {
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	Output  *struct {
		Reason string `json:"reason"`
		Text   string `json:"text"`
	} `json:"output"`
	Errors []struct {
		Attempt int    `json:"attempt"`
		Error   string `json:"error"`
	} `json:"errors"`
}

func showJob(t *testing.T, f *fleet, id int64) (shownJob, string) {
	t.Helper()
	r := runAgent(t, f.dir, f.m, "", "jobs", "show", "--json", strconv.FormatInt(id, 10))
	var j shownJob
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &j) != nil {
		t.Fatalf("jobs show --json %d: %d %s %s", id, r.code, r.stdout, r.stderr)
	}
	text := runAgent(t, f.dir, f.m, "", "jobs", "show", strconv.FormatInt(id, 10))
	return j, text.stdout
}

// A job's outcome is the agent's verdict, never the log's last message:
// a model call that fails (after the adapter's own retries) is an errored
// attempt, retried when its class is network, server or overload and
// cancelled at once when it is auth, billing or an invalid request; a
// retry makes its model call again and completes only with a final
// answer; a stream cut by jobTimeout is an attempt stopped and retried.
// `jobs show` names the class. (On the old worker every one of these
// jobs was `completed`, most with "[no reply: the model request
// failed…]" as their answer and no model call in attempt 2.)
func TestFleetOutcomesFromTheAgentsVerdict(t *testing.T) {
	t.Parallel()
	model := newOutcomeModel(t)
	f := newOutcomeFleet(t, model, "outc", "      maxAttempts: 2\n      jobTimeout: 6s\n")
	f.worker(t, "worker", "--concurrency", "4")
	type want struct {
		state    string
		attempt  int
		requests int    // model requests of the job (the adapter tries 3 times on 5xx/429)
		errHas   string // in every attempt's error, and in `jobs show`
		text     string // the completed job's answer
	}
	cases := map[string]want{
		"job 1 fail 6 500": {state: "discarded", attempt: 2, requests: 6, errHas: "error SERVER"},
		"job 2 fail 3 500": {state: "completed", attempt: 2, requests: 4, errHas: "error SERVER", text: "done 2"},
		"job 3 fail 3 429": {state: "completed", attempt: 2, requests: 4, errHas: "error RATE_LIMIT", text: "done 3"},
		"job 4 fail 3 503": {state: "completed", attempt: 2, requests: 4, errHas: "error SERVER", text: "done 4"},
		"job 5 drop":       {state: "completed", attempt: 2, requests: 2, errHas: "error NETWORK", text: "done 5"},
		"job 6 fail 9 401": {state: "cancelled", attempt: 1, requests: 1, errHas: "error AUTH: the model call failed, not retried"},
		"job 7 fail 9 402": {state: "cancelled", attempt: 1, requests: 1, errHas: "error BILLING: the model call failed, not retried"},
		"job 8 fail 9 400": {state: "cancelled", attempt: 1, requests: 1, errHas: "error PROTOCOL: the model call failed, not retried"},
		"job 9 stall":      {state: "completed", attempt: 2, requests: 2, errHas: "context deadline exceeded", text: "done 9"},
		"job 10":           {state: "completed", attempt: 1, requests: 1, text: "done 10"},
	}
	ids := map[string]int64{}
	for prompt := range cases {
		ids[prompt] = submit(t, f.dir, f.m, prompt)
	}
	waitFor(t, 3*time.Minute, "every job final", func() bool {
		for _, r := range jobRows(t, f.dsn, f.schema) {
			if r.State != "completed" && r.State != "cancelled" && r.State != "discarded" {
				return false
			}
		}
		return true
	})
	for prompt, w := range cases {
		j, shown := showJob(t, f, ids[prompt])
		if j.State != w.state || j.Attempt != w.attempt {
			t.Errorf("%q: %s attempt %d, want %s attempt %d\n%s", prompt, j.State, j.Attempt, w.state, w.attempt, shown)
		}
		if got := model.requests(prompt); got != w.requests {
			t.Errorf("%q: %d model requests, want %d", prompt, got, w.requests)
		}
		if w.errHas != "" {
			if len(j.Errors) == 0 || !strings.Contains(shown, w.errHas) {
				t.Errorf("%q: jobs show lacks %q:\n%s", prompt, w.errHas, shown)
			}
			for _, e := range j.Errors {
				if !strings.Contains(e.Error, w.errHas) {
					t.Errorf("%q attempt %d: error %q lacks %q", prompt, e.Attempt, e.Error, w.errHas)
				}
			}
		}
		switch {
		case w.state == "completed" && (j.Output == nil || j.Output.Text != w.text || j.Output.Reason != "stop"):
			t.Errorf("%q: output %+v, want stop %q\n%s", prompt, j.Output, w.text, shown)
		case w.state != "completed" && j.Output != nil:
			t.Errorf("%q: a %s job has an output %+v", prompt, j.State, j.Output)
		}
	}
}

// A job submitted with a budget its run cannot keep (`submit
// --max-tokens 10`: the first request's prompt alone is larger) ends
// cancelled on its first attempt, not completed and not retried, with no
// model request made; `jobs show` says budget and why.
func TestFleetBudgetStopIsCancelledNotRetried(t *testing.T) {
	t.Parallel()
	model := newOutcomeModel(t)
	f := newOutcomeFleet(t, model, "budg", "      maxAttempts: 3\n")
	f.worker(t, "worker")
	id := submit(t, f.dir, f.m, "--max-tokens", "10", "job 11")
	waitFor(t, 2*time.Minute, "the job final", func() bool {
		s := jobRows(t, f.dsn, f.schema)[id].State
		return s == "completed" || s == "cancelled" || s == "discarded"
	})
	j, shown := showJob(t, f, id)
	if j.State != "cancelled" || j.Attempt != 1 || j.Output != nil {
		t.Fatalf("job: %s attempt %d output %+v, want cancelled at attempt 1\n%s", j.State, j.Attempt, j.Output, shown)
	}
	if !strings.Contains(shown, "budget after 0 steps, not retried: budget exceeded: maxTokens 10") {
		t.Fatalf("jobs show lacks the budget stop:\n%s", shown)
	}
	if n := model.requests("job 11"); n != 0 {
		t.Fatalf("%d model requests, want 0", n)
	}
}
