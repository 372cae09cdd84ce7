package netproxy

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// BenchmarkProxy measures a request through the forwarder and the proxy
// (plain HTTP, one new proxy connection per request: the latency a client
// without keep-alive adds), a 1 MiB body through a CONNECT tunnel (MB/s),
// and the same requests straight to the server for comparison.
func BenchmarkProxy(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			_, _ = w.Write(body)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	sock := b.TempDir() + "/p.sock"
	s, err := Listen(sock, Options{Rules: Rules{Allow: []string{"bench.test"}}, Hosts: map[string]string{"bench.test": u.Hostname()}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = Forward(ctx, ln, sock) }()
	defer func() { cancel(); <-done }()
	pu, _ := url.Parse("http://" + ln.Addr().String())
	get := func(b *testing.B, c *http.Client, target string) {
		resp, err := c.Get(target)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	run := func(name string, tr *http.Transport, target string, bytes int64) {
		b.Run(name, func(b *testing.B) {
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			b.SetBytes(bytes)
			for b.Loop() {
				get(b, c, target)
			}
		})
	}
	plain := "http://bench.test:" + u.Port()
	direct := "http://" + u.Host
	run("request/proxy", &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, plain+"/", 0)
	run("request/direct", &http.Transport{DisableKeepAlives: true}, direct+"/", 0)
	// A CONNECT tunnel per 1 MiB body (https clients tunnel; plain http
	// through a tunnel measures the same copy path without TLS cost).
	tunnel := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return nil, err
		}
		_, _ = io.WriteString(c, "CONNECT bench.test:"+u.Port()+" HTTP/1.1\r\nHost: bench.test:"+u.Port()+"\r\n\r\n")
		buf := make([]byte, len("HTTP/1.1 200 Connection Established\r\n\r\n"))
		if _, err := io.ReadFull(c, buf); err != nil {
			return nil, err
		}
		return c, nil
	}}
	run("1MiB/connect", tunnel, plain+"/big", int64(len(body)))
	run("1MiB/direct", &http.Transport{DisableKeepAlives: true}, direct+"/big", int64(len(body)))
}
