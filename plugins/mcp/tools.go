package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Error codes of failed MCP tool results.
const (
	// CodeServerError: the server reported the call as failed (isError).
	CodeServerError = "MCP_TOOL_ERROR"
	// CodeUnavailable: the server is not connected (failed, exited,
	// restarting) or the connection broke during the call.
	CodeUnavailable = "MCP_SERVER_UNAVAILABLE"
	// CodeProtocol: the server answered with a JSON-RPC error.
	CodeProtocol = "MCP_PROTOCOL_ERROR"
)

// maxInlineImageBytes bounds an image passed on as an image block; a larger
// one becomes a text placeholder (sessions stay small; the model adapter
// shows images as placeholders anyway).
const maxInlineImageBytes = 256 << 10

// ToolName returns the registry name of tool on server: mcp__SERVER__TOOL
// with characters outside A-Z a-z 0-9 _ - replaced by _; a name longer
// than 64 characters is cut to 55 and suffixed with _ and 8 hex digits of
// its SHA-256, so distinct long names stay distinct.
func ToolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= 64 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:55] + "_" + hex.EncodeToString(sum[:4])
}

// toolsetConfig is the config of one mounted tool set: the tools of one
// server at one tools/list.
type toolsetConfig struct {
	tools []*tools.Tool
}

// toolset is an internal child plugin: it registers one server's tools as
// its effects, so disposing it (on list_changed, on row disposal) removes
// exactly them.
var toolset = core.Define("mcp-tools", func(c *core.Context, cfg toolsetConfig) error {
	return tools.Register(c, cfg.tools...)
}, core.WithInject(tools.Key.Name()))

// mountTools makes the server's registered tools match list. Each tool is
// registered by a child fiber of its own, so a re-list (list_changed) leaves
// unchanged tools registered throughout: only removed and changed tools are
// disposed, and new and changed ones mounted.
func (s *server) mountTools(ctx context.Context, list []*mcp.Tool) error {
	want := map[string]toolEntry{}
	for _, t := range list {
		d := s.define(t)
		if err := d.Err(); err != nil {
			s.m.log.Warn("mcp tool skipped", "server", s.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		if _, dup := want[d.Name()]; dup {
			s.m.log.Warn("mcp tool skipped: name clashes after sanitizing", "server", s.cfg.Name, "tool", t.Name)
			continue
		}
		want[d.Name()] = toolEntry{tool: d, print: fingerprint(t)}
	}
	s.mu.Lock()
	old := s.toolsets
	s.mu.Unlock()
	next := map[string]toolEntry{}
	for name, e := range old {
		if w, ok := want[name]; ok && w.print == e.print {
			next[name] = e
			continue
		}
		_ = e.fiber.Dispose(ctx)
		_ = e.fiber.Await(ctx) // Dispose does not wait; the replacement needs the name free
	}
	var mounted []*core.Fiber
	for name, w := range want {
		if _, kept := next[name]; kept {
			continue
		}
		w.fiber = s.m.c.Plugin(toolset, &toolsetConfig{tools: []*tools.Tool{w.tool}})
		next[name] = w
		mounted = append(mounted, w.fiber)
	}
	s.mu.Lock()
	s.toolsets = next
	s.mu.Unlock()
	for _, f := range mounted {
		if err := f.Await(ctx); err != nil {
			return err
		}
		if err := f.Err(); err != nil {
			return err
		}
	}
	return nil
}

// toolEntry is one registered server tool: its definition, the fiber that
// registered it and a fingerprint of the server's description of it.
type toolEntry struct {
	tool  *tools.Tool
	fiber *core.Fiber
	print string
}

// fingerprint identifies a tool description: a re-list that returns the same
// fingerprint keeps the registered tool.
func fingerprint(t *mcp.Tool) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// dropTools disposes every registered tool of the server.
func (s *server) dropTools(ctx context.Context) {
	s.mu.Lock()
	old := s.toolsets
	s.toolsets = nil
	s.mu.Unlock()
	for _, e := range old {
		_ = e.fiber.Dispose(ctx)
	}
}

// define turns one server tool into a registry tool.
func (s *server) define(t *mcp.Tool) *tools.Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	// Compiled at the first call: a server may offer dozens of tools, most
	// never called, and connecting should not pay for their schemas.
	opts := []tools.Option{tools.WithLazySchema(), tools.WithPresent(presenter(t, schema))}
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		opts = append(opts, tools.WithReadOnly())
	}
	desc := t.Description
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	name := t.Name
	return tools.DefineRaw(ToolName(s.cfg.Name, t.Name), desc, schema,
		func(ctx context.Context, _ *tools.Execution, args json.RawMessage) (any, error) {
			return s.call(ctx, name, args)
		}, opts...)
}

// call runs one tools/call with the server's call timeout. On timeout or
// cancellation the SDK sends notifications/cancelled for the request.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage) ([]tools.Content, error) {
	session, err := s.current()
	if err != nil {
		return nil, &tools.Error{Name: "McpServerError", Code: CodeUnavailable, Message: err.Error()}
	}
	timeout := s.callTimeout()
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	res, err := session.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(context.Cause(cctx), errCallTimeout):
		return nil, &tools.Error{Name: tools.NameToolTimeout, Code: tools.CodeToolTimeout,
			Message: fmt.Sprintf("mcp server %q: tool %q timed out after %s (the server was sent notifications/cancelled)", s.cfg.Name, tool, timeout)}
	default:
		if _, cerr := s.current(); cerr != nil {
			return nil, &tools.Error{Name: "McpServerError", Code: CodeUnavailable, Message: cerr.Error()}
		}
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return nil, &tools.Error{Name: "McpServerError", Code: CodeProtocol, Message: fmt.Sprintf("mcp server %q: tool %q: %v", s.cfg.Name, tool, err)}
		}
		return nil, &tools.Error{Name: "McpServerError", Code: CodeUnavailable, Message: fmt.Sprintf("mcp server %q: tool %q: %v", s.cfg.Name, tool, err)}
	}
	content := convert(res)
	if res.IsError {
		msg := tools.TextOf(content)
		if msg == "" {
			msg = "the tool reported an error"
		}
		return nil, &tools.Error{Name: "McpToolError", Code: CodeServerError, Message: msg}
	}
	return content, nil
}

// convert maps a tools/call result to content blocks: text as text, images
// as image blocks (a placeholder above maxInlineImageBytes), audio as a
// placeholder, resource links and embedded resources as text. The model
// sees a result once: structuredContent, which the spec has servers repeat
// in the content blocks (the official filesystem server returns a file as
// a text block and again as {"content": text}), becomes JSON text only
// when the result has no content block.
func convert(res *mcp.CallToolResult) []tools.Content {
	out := make([]tools.Content, 0, len(res.Content)+1)
	for _, c := range res.Content {
		out = append(out, block(c))
	}
	if res.StructuredContent != nil && len(out) == 0 {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out = append(out, tools.Text(string(b)))
		}
	}
	if len(out) == 0 {
		out = append(out, tools.Text(""))
	}
	return out
}

func block(c mcp.Content) tools.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return tools.Text(c.Text)
	case *mcp.ImageContent:
		if len(c.Data) > maxInlineImageBytes {
			return tools.Text(fmt.Sprintf("[image %s, %d bytes: omitted, larger than %d bytes]", c.MIMEType, len(c.Data), maxInlineImageBytes))
		}
		return tools.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType}
	case *mcp.AudioContent:
		return tools.Text(fmt.Sprintf("[audio %s, %d bytes: not shown]", c.MIMEType, len(c.Data)))
	case *mcp.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link] %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(&b, " name=%q", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, " mimeType=%s", c.MIMEType)
		}
		if c.Description != "" {
			fmt.Fprintf(&b, "\n%s", c.Description)
		}
		return tools.Text(b.String())
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return tools.Text("[resource]")
		}
		if r.Text != "" || len(r.Blob) == 0 {
			return tools.Text(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
		}
		return tools.Text(fmt.Sprintf("[resource %s: %s, %d bytes of binary data not shown]", r.URI, r.MIMEType, len(r.Blob)))
	}
	b, _ := json.Marshal(c)
	return tools.Text(string(b))
}
