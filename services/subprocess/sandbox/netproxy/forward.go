package netproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Env is what a sandboxed command's environment gets so that HTTP clients
// (curl, go, npm, pip, cargo, …) use the proxy at 127.0.0.1:port: HTTP_PROXY
// and HTTPS_PROXY (http://), ALL_PROXY (socks5h://, names resolved by the
// proxy), each also lower-case, and NO_PROXY for the loopback names.
func Env(port int) []string {
	hp := "http://127.0.0.1:" + strconv.Itoa(port)
	sp := "socks5h://127.0.0.1:" + strconv.Itoa(port)
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + hp, "http_proxy=" + hp,
		"HTTPS_PROXY=" + hp, "https_proxy=" + hp,
		"ALL_PROXY=" + sp, "all_proxy=" + sp,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

// EnvNames are the variables Env sets.
var EnvNames = []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"}

// Forward accepts connections on ln (the sandbox's loopback port) and
// joins each to a new connection to the proxy's unix socket at path,
// until ctx ends or ln fails. It closes ln and waits for its connections
// before returning.
func Forward(ctx context.Context, ln net.Listener, path string) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	active := map[net.Conn]struct{}{}
	track := func(c net.Conn, add bool) {
		mu.Lock()
		defer mu.Unlock()
		if add {
			if ctx.Err() != nil {
				_ = c.Close() // the stop above has run: close it here
			}
			active[c] = struct{}{}
		} else {
			delete(active, c)
		}
	}
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range active {
			_ = c.Close()
		}
	})
	defer stop()
	defer wg.Wait()
	defer ln.Close()
	var d net.Dialer
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return ctx.Err()
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		track(c, true)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer track(c, false)
			defer c.Close()
			up, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return
			}
			track(up, true)
			defer track(up, false)
			defer up.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}
