package sandboxnetworkask

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// person answers approval requests as scripted and records them.
type person struct {
	mu      sync.Mutex
	answers map[string]tools.ApprovalOutcome // by host
	asked   []tools.ApprovalRequest
}

func (p *person) Ask(_ context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req)
	for h, a := range p.answers {
		if strings.Contains(req.Arguments, `"host":"`+h+`"`) {
			return a, nil
		}
	}
	return tools.ApprovalUnavailable, nil
}

// TestAskThroughTheSandbox: curl in the bwrap sandbox, with network
// {ask: true} and nothing listed, reaches a host the person allows
// (always: asked once for two commands), is refused one the person denies
// with a message saying so, and one no one answers with the rule to add.
func TestAskThroughTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl not installed")
		}
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok "+r.Host) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ip := u.Hostname()
	rt, err := subprocess.New(subprocess.Options{SandboxBackend: "bwrap", NetworkHosts: map[string]string{"yes.test": ip, "no.test": ip, "nobody.test": ip}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Close(context.Background()) }()
	if b, errs := rt.SandboxBackend(); b != "bwrap" {
		if os.Getenv("CI") != "" {
			t.Fatalf("bwrap unavailable: %v", errs)
		}
		t.Skipf("bwrap unavailable: %v", errs)
	}
	p := &person{answers: map[string]tools.ApprovalOutcome{"yes.test": tools.ApprovalAllowedAlways, "no.test": tools.ApprovalRejected}}
	remove := rt.SetNetworkAsker(func(ctx context.Context, host string, port int) subprocess.NetworkAnswer {
		return Ask(ctx, p, host, port)
	})
	defer remove()
	pol := &subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite, Network: subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkProxy, Ask: true}}
	ws := t.TempDir()
	run := func(host string) (string, []string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := rt.Run(subprocess.Spec{Context: ctx, Argv: []string{"curl", "-sS", "http://" + host + ":" + u.Port() + "/"}, Dir: ws, Sandbox: pol,
			Stdin: subprocess.IgnoreStdin(), Stdout: subprocess.Collect(1 << 16), Stderr: subprocess.Collect(1 << 16), Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout.ReadFrom(0).Text, res.NetworkRefused
	}
	for range 2 {
		if out, refused := run("yes.test"); out != "ok yes.test:"+u.Port() || refused != nil {
			t.Errorf("yes.test: %q %q", out, refused)
		}
	}
	if out, refused := run("no.test"); !strings.Contains(out, "refused when you were asked") || len(refused) != 1 {
		t.Errorf("no.test: %q %q", out, refused)
	}
	if out, _ := run("nobody.test"); !strings.Contains(out, `add "nobody.test" to sandbox.network.allowedDomains`) {
		t.Errorf("nobody.test: %q", out)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.asked) != 3 || p.asked[0].Tool != Tool || !strings.Contains(p.asked[0].Reason, "yes.test (port "+u.Port()+")") || len(p.asked[0].AlwaysRules) != 0 {
		t.Errorf("questions: %+v, want one each for yes.test, no.test, nobody.test", p.asked)
	}
}
