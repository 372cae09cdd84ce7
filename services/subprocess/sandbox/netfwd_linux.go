package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
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
