package tracing

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// httpClient is the OTLP/HTTP (binary protobuf) transport of the span
// exporter: an [otlptrace.Client], so otlptrace converts the SDK's spans
// and batches them, and this sends each batch as one POST of an
// ExportTraceServiceRequest to ENDPOINT/v1/traces.
//
// It stands in for otlptracehttp, whose request type comes from a package
// that also holds the gRPC service and its REST gateway: that chain put
// gRPC, the gateway and HTTP/2 in every harness binary (3.8 MB of 60.8).
// The wire format is the same; what it reads from the environment is the
// OTLP exporter specification's: the endpoint, headers, timeout,
// compression and TLS files, each OTEL_EXPORTER_OTLP_TRACES_* variable
// before its OTEL_EXPORTER_OTLP_* one. A failed export is retried while
// the server says it is transient (429, 502, 503, 504, or a network
// error), honouring Retry-After, within the export timeout.
type httpClient struct {
	url     string
	headers http.Header
	gzip    bool
	timeout time.Duration
	client  *http.Client
}

// Environment variables of the OTLP exporter, without their
// OTEL_EXPORTER_OTLP_ or OTEL_EXPORTER_OTLP_TRACES_ prefix.
const (
	envEndpoint    = "ENDPOINT"
	envHeaders     = "HEADERS"
	envTimeout     = "TIMEOUT"
	envCompression = "COMPRESSION"
	envCertificate = "CERTIFICATE"
	envClientCert  = "CLIENT_CERTIFICATE"
	envClientKey   = "CLIENT_KEY"
)

// defaultHTTPEndpoint is the OTLP/HTTP endpoint when none is set.
const defaultHTTPEndpoint = "http://localhost:4318"

// newHTTPClient reads the exporter's configuration through lookup. An
// invalid value is an error naming the variable.
func newHTTPClient(lookup func(string) (string, bool)) (*httpClient, error) {
	get := func(name string) (string, string) {
		for _, prefix := range []string{"OTEL_EXPORTER_OTLP_TRACES_", "OTEL_EXPORTER_OTLP_"} {
			if v, ok := lookup(prefix + name); ok && strings.TrimSpace(v) != "" {
				return strings.TrimSpace(v), prefix + name
			}
		}
		return "", ""
	}
	c := &httpClient{headers: http.Header{}, timeout: 10 * time.Second}
	switch v, key := get(envEndpoint); {
	case v == "":
		c.url = defaultHTTPEndpoint + "/v1/traces"
	case key == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
		c.url = v // the signal's own endpoint is used as is
	default:
		c.url = strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	if u, err := url.Parse(c.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", redactURL(c.url))
	}
	if v, key := get(envHeaders); v != "" {
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(pair, "=")
			k, kerr := url.PathUnescape(strings.TrimSpace(k))
			val, verr := url.PathUnescape(strings.TrimSpace(val))
			if !ok || k == "" || kerr != nil || verr != nil {
				return nil, fmt.Errorf("%s: want key=value pairs separated by commas (values URL-encoded)", key) // the value may hold a credential: never shown
			}
			c.headers.Add(k, val)
		}
	}
	if v, key := get(envTimeout); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%s=%s: want a positive number of milliseconds", key, v)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, key := get(envCompression); strings.ToLower(v) {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("%s=%s: want gzip or none", key, v)
	}
	tlsConf, err := tlsConfig(get)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConf
	c.client = &http.Client{Transport: tr}
	return c, nil
}

// tlsConfig builds the TLS configuration from the certificate files, or
// returns nil (the system roots) when none is named.
func tlsConfig(get func(string) (string, string)) (*tls.Config, error) {
	ca, caKey := get(envCertificate)
	cert, certKey := get(envClientCert)
	key, keyKey := get(envClientKey)
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caKey, err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s: no PEM certificate in the file", caKey, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%s and %s: set both or neither", cmp.Or(certKey, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"), cmp.Or(keyKey, "OTEL_EXPORTER_OTLP_CLIENT_KEY"))
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certKey, keyKey, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// Start implements otlptrace.Client: there is no connection to open.
func (c *httpClient) Start(context.Context) error { return nil }

// Stop implements otlptrace.Client: idle connections are closed.
func (c *httpClient) Stop(context.Context) error {
	c.client.CloseIdleConnections()
	return nil
}

// UploadTraces implements otlptrace.Client: one POST of the batch,
// retried while the failure is transient and the timeout allows.
func (c *httpClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	body, err := exportRequest(spans)
	if err != nil {
		return err
	}
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(body); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		wait, err := c.post(ctx, body)
		if err == nil || wait < 0 {
			return err
		}
		wait = max(wait, backoff+rand.N(backoff/2))
		backoff = min(2*backoff, 5*time.Second)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// post sends body once. On failure it also says whether to retry: wait
// < 0 means no, else at least wait (0: the backoff decides).
func (c *httpClient) post(ctx context.Context, body []byte) (wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		return 0, fmt.Errorf("OTLP export to %s: %w", redactURL(c.url), err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_ = resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("OTLP export to %s: HTTP %s: %s", redactURL(c.url), resp.Status, printable(msg))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			return time.Duration(s) * time.Second, err
		}
		return 0, err
	}
	return -1, err
}

// printable keeps the ASCII printable bytes of a (protobuf or text) error
// body, for a message.
func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r >= ' ' && r <= '~' {
			return r
		}
		return -1
	}, string(b))
}

// exportRequest encodes an ExportTraceServiceRequest: its only field is
// resource_spans (1), repeated. Encoding it here spares the binary the
// collector package, which holds the gRPC service beside the message.
func exportRequest(spans []*tracepb.ResourceSpans) ([]byte, error) {
	var out []byte
	opts := proto.MarshalOptions{}
	for _, rs := range spans {
		b, err := opts.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

// newHTTPExporter is the OTLP/HTTP span exporter.
func newHTTPExporter(ctx context.Context, lookup func(string) (string, bool)) (*otlptrace.Exporter, error) {
	c, err := newHTTPClient(lookup)
	if err != nil {
		return nil, err
	}
	return otlptrace.New(ctx, c)
}

var _ otlptrace.Client = (*httpClient)(nil)
