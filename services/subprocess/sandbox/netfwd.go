package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
	"golang.org/x/sys/unix"
)

// A command whose policy's network is proxied (Network.Proxied) runs in a
// network namespace of its own (only loopback), like one with network
// off. The harness runs the proxy (package netproxy) on a unix socket in a
// private directory that the sandbox binds read-only; inside, a forwarder
// listens on 127.0.0.1:port and passes each connection on to that socket,
// and HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at the port.
//
// The forwarder must listen inside the namespace before the command
// starts. In a shared sandbox (a zygote) the zygote server runs it (a
// goroutine, for the zygote's life). A command in a sandbox of its own
// runs under a re-exec of the current executable (netfwdArg), reached
// through the proxy directory, which listens, starts the command as its
// child with the same descriptors, passes SIGTERM on, and exits with the
// command's status.

// netfwdArg is argv[1] of the forwarder; then port, socket, program and
// the command's argv.
const netfwdArg = "harness-sandbox-netfwd"

// netfwdEnv marks the forwarder's environment ("1"); the forwarder
// removes it before the command starts. In a zygote's environment it
// carries "port socket" instead (netfwdZygoteEnv).
const (
	netfwdEnv       = "HARNESS_SANDBOX_NETFWD"
	netfwdZygoteEnv = "HARNESS_SANDBOX_ZYGOTE_NETFWD"
)

func init() {
	if len(os.Args) >= 6 && os.Args[1] == netfwdArg && os.Getenv(netfwdEnv) == "1" {
		os.Exit(runNetfwd(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]))
	}
}

// runNetfwd is the forwarder process: it returns (or dies with) the
// command's status.
func runNetfwd(port, sock, path string, argv []string) int {
	// Descriptors inherited from the harness (fd 3, a control channel)
	// are those without close-on-exec; they go on to the command.
	var extra []*os.File
	for fd := 3; fd < 64; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			break
		}
		extra = append(extra, os.NewFile(uintptr(fd), "fd"+strconv.Itoa(fd)))
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	_ = os.Unsetenv(netfwdEnv)
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness sandbox: network proxy forwarder: %v\n", err)
		return 126
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = netproxy.Forward(ctx, ln, sock)
	}()
	// Terminal signals reach the command through its process group (the
	// forwarder's): caught here so that the forwarder outlives them, and
	// reset to default in the command by exec. SIGTERM sent to the
	// forwarder alone is passed on.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGTERM, syscall.SIGPIPE)
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: extra}
	if err := cmd.Start(); err != nil {
		cancel()
		<-done
		fmt.Fprintf(os.Stderr, "harness sandbox: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	}
	for _, f := range extra {
		_ = f.Close()
	}
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				_ = cmd.Process.Signal(s)
			}
		}
	}()
	_ = cmd.Wait()
	cancel()
	<-done
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = unix.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// proxies are a backend's network proxies, one per distinct rule set
// (started on first use, stopped by close).
type proxies struct {
	mu     sync.Mutex
	m      map[string]*proxyInst
	closed bool
}

// proxyInst is one running proxy.
type proxyInst struct {
	// dir is the private (0700) directory holding the socket and the
	// forwarder's mount point.
	dir, sock, exe string
	port           int
	srv            *netproxy.Server
}

// maxProxies bounds the proxies (distinct rule sets) of a backend.
const maxProxies = 16

// get returns the proxy for rules, starting it when needed.
func (ps *proxies) get(rules netproxy.Rules, hosts map[string]string, ask netproxy.Asker) (*proxyInst, error) {
	key := strings.Join(rules.Allow, "\n") + "\x00" + strings.Join(rules.Deny, "\n") + "\x00" + strconv.FormatBool(ask != nil)
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		key += "\x00" + h + "=" + hosts[h]
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errors.New("network proxy: backend closed")
	}
	if p := ps.m[key]; p != nil {
		return p, nil
	}
	if len(ps.m) >= maxProxies {
		return nil, fmt.Errorf("network proxy: more than %d distinct network policies", maxProxies)
	}
	p, err := startProxy(rules, hosts, ask)
	if err != nil {
		return nil, err
	}
	if ps.m == nil {
		ps.m = map[string]*proxyInst{}
	}
	ps.m[key] = p
	return p, nil
}

// startProxy creates the private directory and starts a proxy on its
// socket, with a random loopback port for the forwarders.
func startProxy(rules netproxy.Rules, hosts map[string]string, ask netproxy.Asker) (*proxyInst, error) {
	dir, err := os.MkdirTemp("", "harness-netproxy-")
	if err != nil {
		return nil, fmt.Errorf("network proxy: %w", err)
	}
	p := &proxyInst{dir: dir, sock: filepath.Join(dir, "proxy.sock"), exe: filepath.Join(dir, "forwarder")}
	// The mount point of the forwarder executable (bound over it).
	if err := os.WriteFile(p.exe, nil, 0o500); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("network proxy: %w", err)
	}
	var b [2]byte
	_, _ = rand.Read(b[:])
	p.port = 20000 + int(binary.LittleEndian.Uint16(b[:]))%40000
	p.srv, err = netproxy.Listen(p.sock, netproxy.Options{Rules: rules, Hosts: hosts, Ask: ask})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// close stops every proxy and removes its directory.
func (ps *proxies) close() {
	ps.mu.Lock()
	ps.closed = true
	m := ps.m
	ps.m = nil
	ps.mu.Unlock()
	for _, p := range m {
		_ = p.srv.Close()
		_ = os.RemoveAll(p.dir)
	}
}

// proxyEnv is env without any proxy variable, plus those of the proxy at
// port.
func proxyEnv(env []string, port int) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(netproxy.EnvNames, k)
	})
	return append(out, netproxy.Env(port)...)
}

// startZygoteForwarder listens on the port of fwd ("port socket") and
// forwards to the socket for the rest of the zygote server's life.
func startZygoteForwarder(fwd string) error {
	port, sock, ok := strings.Cut(fwd, " ")
	if !ok {
		return fmt.Errorf("bad forwarder spec %q", fwd)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	go func() { _ = netproxy.Forward(context.Background(), ln, sock) }()
	return nil
}

// NetworkLog is the proxy's record of the requests it refused since a
// command started (Command.Network).
type NetworkLog struct {
	srv   *netproxy.Server
	after uint64
}

// Refused returns the messages of the requests the proxy refused since
// the command started, one per host and port, in order. The proxy is
// shared by the commands of the same network policy: a command running at
// the same time may have made some of them.
func (l *NetworkLog) Refused() []string {
	if l == nil {
		return nil
	}
	refs, _ := l.srv.Refusals(l.after)
	var out []string
	seen := map[string]bool{}
	for _, r := range refs {
		if k := r.Host + ":" + strconv.Itoa(r.Port); !seen[k] {
			seen[k] = true
			out = append(out, r.Message)
		}
	}
	return out
}
