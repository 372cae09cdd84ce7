package cli_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A worker started while PostgreSQL does not answer waits for it, one
// line per try, and works jobs once it answers. The database is reached
// through a local forwarder that drops every connection for its first 4 s.
func TestFleetWorkerWaitsForTheDatabase(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "", nil)
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	harnessBinary(t) // built before the forwarder's clock starts
	fwd := forwarder(t, u.Host, 4*time.Second)
	real := u.Host
	u.Host = fwd
	f.m = strings.ReplaceAll(f.m, f.dsn, u.String())
	f.cfgWrite(t)
	start := time.Now()
	w := f.worker(t, "worker")
	waited := time.Since(start)
	out := w.stderr.String()
	if n := strings.Count(out, "harness worker: waiting for PostgreSQL (try "); n < 2 {
		t.Fatalf("want at least 2 waiting lines before the banner, got %d:\n%s", n, out)
	}
	for _, want := range []string{"(try 1, next in 1s): PostgreSQL is unreachable at " + fwd + ": ", "(try 2, next in 2s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("worker stderr lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "harness_test:harness_test") || strings.Contains(out, real) {
		t.Errorf("worker stderr names the DSN or the real server:\n%s", out)
	}
	if waited < 4*time.Second {
		t.Errorf("banner after %s, before the database answered", waited)
	}
	id := submit(t, f.dir, f.m, "job 1 quick")
	waitFor(t, 60*time.Second, "the job to complete", func() bool { return jobRows(t, f.dsn, f.schema)[id].State == "completed" })
	t.Logf("worker banner after %s:\n%s", waited, out)
}

// `harness jobs` and `harness submit` fail at once when PostgreSQL does
// not answer, naming its address, not the DSN.
func TestFleetCommandsFailFastWithoutTheDatabase(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cli", "", nil)
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = l.Addr().String()
	l.Close() // nothing listens there now
	m := strings.ReplaceAll(f.m, f.dsn, u.String())
	for _, args := range [][]string{{"jobs"}, {"submit", "job 1 quick"}} {
		start := time.Now()
		r := runAgent(t, f.dir, m, "", args...)
		want := "harness: PostgreSQL is unreachable at " + u.Host + ": "
		if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "harness_test:harness_test") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v took %s", args, d)
		}
	}
}

// cfgWrite writes f.m to f.cfg again after a test changed it.
func (f *fleet) cfgWrite(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(f.cfg, []byte(f.m), 0o600); err != nil {
		t.Fatal(err)
	}
}

// forwarder listens on a local port and forwards each connection to
// target; for the first closedFor it accepts and closes them at once. It
// returns its address; it stops with the test.
func forwarder(t *testing.T, target string, closedFor time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := time.Now().Add(closedFor)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if time.Now().Before(open) {
				c.Close()
				continue
			}
			d, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(d)
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(d, c); d.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, d); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// SIGTERM ends a worker's wait for the database: exit 130, no banner.
func TestFleetWorkerWaitEndsOnSIGTERM(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "cliwaitterm", "", nil)
	u, err := url.Parse(f.dsn)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = l.Addr().String()
	l.Close() // nothing listens there now
	f.m = strings.ReplaceAll(f.m, f.dsn, u.String())
	f.cfgWrite(t)
	var stderr syncBuffer
	cmd := exec.Command(harnessBinary(t), "--config", f.cfg, "worker")
	cmd.Dir, cmd.Env, cmd.Stderr = f.dir, baseEnv(), &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the first waiting line", func() bool {
		return strings.Contains(stderr.String(), "harness worker: waiting for PostgreSQL (try 1, next in 1s): PostgreSQL is unreachable at "+u.Host)
	})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || strings.Contains(stderr.String(), ": working") {
		t.Fatalf("worker after SIGTERM while waiting: %v\n%s", err, stderr.String())
	}
}
