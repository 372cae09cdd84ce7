package netproxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928), CONNECT only, no authentication.
const (
	socksVersion    = 5
	socksNoAuth     = 0
	socksNoMethod   = 0xff
	socksConnect    = 1
	socksIPv4       = 1
	socksDomain     = 3
	socksIPv6       = 4
	repSucceeded    = 0
	repFailure      = 1
	repNotAllowed   = 2
	repNetUnreach   = 3
	repHostUnreach  = 4
	repRefused      = 5
	repCmdUnsupp    = 7
	repAddrUnsupp   = 8
	socksHandshakeT = 30 * time.Second
)

// serveSOCKS serves one SOCKS5 connection (its first byte, 5, is still in
// br). The caller closes c.
func (s *Server) serveSOCKS(c net.Conn, br *bufio.Reader) {
	_ = c.SetDeadline(time.Now().Add(socksHandshakeT))
	host, port, err := socksHandshake(c, br)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{}) // a question may take a while
	v, asked := s.decideWhileConnected(c, br, host, port)
	if !v.Allowed {
		s.refuse(host, port, v, asked, "socks5")
		_ = socksReply(c, repNotAllowed)
		return
	}
	up, err := s.dial(s.ctx, host, port, v.Rule)
	if err != nil {
		s.opts.Log.Info("sandbox network: connect failed", "proto", "socks5", "host", host, "port", port, "err", err)
		_ = socksReply(c, dialReply(err))
		return
	}
	if err := socksReply(c, repSucceeded); err != nil {
		_ = up.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	var client io.Reader = c
	if n := br.Buffered(); n > 0 {
		client = io.MultiReader(io.LimitReader(br, int64(n)), c)
	}
	s.splice(c, client, up)
}

// socksHandshake reads the greeting and the request, answers the
// greeting, and returns the requested host and port. A request the proxy
// cannot serve gets its reply here and an error.
func socksHandshake(c net.Conn, br *bufio.Reader) (string, int, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", 0, err
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", 0, err
	}
	ok := false
	for _, m := range methods {
		ok = ok || m == socksNoAuth
	}
	if !ok {
		_, _ = c.Write([]byte{socksVersion, socksNoMethod})
		return "", 0, errors.New("socks5: no acceptable method")
	}
	if _, err := c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return "", 0, err
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return "", 0, err
	}
	if req[0] != socksVersion {
		return "", 0, errors.New("socks5: bad version")
	}
	var host string
	switch req[3] {
	case socksIPv4, socksIPv6:
		n := 4
		if req[3] == socksIPv6 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, err
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.String()
	case socksDomain:
		n, err := br.ReadByte()
		if err != nil {
			return "", 0, err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", 0, err
		}
		host = string(b)
	default:
		_ = socksReply(c, repAddrUnsupp)
		return "", 0, errors.New("socks5: bad address type")
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return "", 0, err
	}
	if req[1] != socksConnect {
		_ = socksReply(c, repCmdUnsupp)
		return "", 0, errors.New("socks5: only CONNECT is supported")
	}
	port := int(binary.BigEndian.Uint16(pb[:]))
	if host == "" || port == 0 {
		_ = socksReply(c, repAddrUnsupp)
		return "", 0, errors.New("socks5: bad address " + host + ":" + strconv.Itoa(port))
	}
	return host, port, nil
}

// socksReply writes a reply with a zero IPv4 bound address.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0})
	return err
}

// dialReply maps a connect error to a SOCKS5 reply code.
func dialReply(err error) byte {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return repRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return repNetUnreach
	case errors.Is(err, syscall.EHOSTUNREACH):
		return repHostUnreach
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return repHostUnreach
	}
	return repFailure
}

// decideWhileConnected is decide for a SOCKS5 request on c, whose
// question (if one is asked) is withdrawn when the client closes c. The
// client sends nothing before the reply; data it sends early stays in br.
func (s *Server) decideWhileConnected(c net.Conn, br *bufio.Reader, host string, port int) (Verdict, bool) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		if _, err := br.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cancel() // the client left
		}
	}()
	v, asked := s.decide(ctx, host, port)
	_ = c.SetReadDeadline(time.Now())
	<-watching
	_ = c.SetReadDeadline(time.Time{})
	return v, asked
}
