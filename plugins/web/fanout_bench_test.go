package web

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
)

// BenchmarkSSEFanout measures one agent event's way from the session's
// observer (publishAgent) to every watcher having read it off an SSE
// stream over loopback HTTP: ns/op is the fan-out latency of one text
// delta to all subscribers. The reference is the same bytes written to
// and read back from one plain loopback TCP connection (the floor).
//
//	go test ./plugins/web -run '^$' -bench SSEFanout -benchtime 2000x
func BenchmarkSSEFanout(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("sse/subscribers=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
	b.Run("reference/tcp", benchTCP)
}

func benchFanout(b *testing.B, n int) {
	h := &hub{}
	l := &live{h: h, id: "bench", subs: map[*sub]struct{}{}, approvals: map[string]chan answer{}, shown: map[string]Approval{}}
	srv := httptest.NewServer(http.HandlerFunc(l.serveSSE))
	defer srv.Close()
	got := make(chan struct{}, 1024)
	var readers []*http.Response
	for range n {
		resp, err := http.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		readers = append(readers, resp)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data: ") {
					got <- struct{}{}
				}
			}
		}()
	}
	for { // every watcher is subscribed
		l.mu.Lock()
		k := len(l.subs)
		l.mu.Unlock()
		if k == n {
			break
		}
	}
	e := agent.Event{Type: agent.EventText, Text: "a streamed text delta of a typical size"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l.publishAgent(e)
		for range n {
			<-got
		}
	}
	b.StopTimer()
	l.close()
	for _, r := range readers {
		r.Body.Close()
	}
}

func benchTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			if _, err := c.Write(line); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	line := []byte(`data: {"v":1,"type":"text","sessionId":"bench","text":"a streamed text delta of a typical size"}` + "\n")
	r := bufio.NewReader(c)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(line); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
