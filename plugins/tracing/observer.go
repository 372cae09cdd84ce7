package tracing

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/telemetry"
)

// ObserverOptions configure an [Observer].
type ObserverOptions struct {
	// AgentName is gen_ai.agent.name (default "harness").
	AgentName string
	// Parent carries the remote parent of top-level turns (TRACEPARENT);
	// nil: each top-level turn starts a trace.
	Parent context.Context
	// Attributes are added to every invoke_agent span (the job's id and
	// attempt).
	Attributes []attribute.KeyValue
}

// maxIdleSessions bounds the sessions an Observer remembers between turns
// (their provider, model and lineage); past it, idle ones are forgotten.
const maxIdleSessions = 1024

// maxDescription bounds an error status description, in bytes.
const maxDescription = 512

// Observer turns the agent's events into spans: an invoke_agent span per
// turn, a chat span per model call, an execute_tool span per tool call
// (see the package doc for the tree). Register [Observer.Handle] as an
// [agent.Observed] listener. Safe for concurrent use: sessions (a parent
// and its subagents) emit events from several goroutines.
type Observer struct {
	tracer trace.Tracer
	opts   ObserverOptions

	mu       sync.Mutex
	sessions map[string]*sessionTrace
}

// sessionTrace is what the observer knows of one session.
type sessionTrace struct {
	provider, model string
	parentID        string
	depth           int
	resumed         bool
	turn            *turnTrace // the running turn, or nil
}

// turnTrace holds a running turn's open spans.
type turnTrace struct {
	n    int
	ctx  context.Context // carries span
	span trace.Span

	chat     trace.Span      // the open model call's span (nil once ended)
	chatCtx  context.Context // the last model call's context: its tool calls' parent
	chatStep int
	chatEnd  time.Time // when the reply ended (zero while streaming)
	replied  bool      // the reply arrived (an assistant event)
	finish   string

	tools []openTool // dispatched calls without a recorded result, in order
}

type openTool struct {
	id   string
	ctx  context.Context
	span trace.Span
}

// NewObserver returns an observer that makes spans with tp's tracer.
func NewObserver(tp trace.TracerProvider, o ObserverOptions) *Observer {
	if o.AgentName == "" {
		o.AgentName = "harness"
	}
	if o.Parent == nil {
		o.Parent = context.Background()
	}
	return &Observer{tracer: tp.Tracer(telemetry.ScopeName), opts: o, sessions: map[string]*sessionTrace{}}
}

// Handle is the [agent.Observed] listener: it starts and ends spans as
// the event says. It never fails.
func (ob *Observer) Handle(_ context.Context, e agent.Event) error {
	if e.SessionID == "" {
		return nil
	}
	now := time.Now()
	ob.mu.Lock()
	defer ob.mu.Unlock()
	st := ob.sessions[e.SessionID]
	if st == nil {
		st = &sessionTrace{}
		ob.sessions[e.SessionID] = st
	}
	switch {
	case e.Type == agent.EventSession:
		st.provider, st.model, _ = strings.Cut(e.Model, "/")
		st.parentID, st.depth, st.resumed = e.ParentID, e.Depth, e.Resumed
	case e.Type == agent.EventResult:
		ob.endTurn(e.SessionID, st, e, now)
	case e.Type == agent.EventState:
		// A keyed state carries nothing a span shows, and may be set
		// after its turn ended (a job's verdict): it opens no turn.
	case e.Turn > 0:
		t := ob.turnOf(e.SessionID, st, e.Turn, now)
		switch e.Type {
		case agent.EventStep:
			ob.startChat(st, t, e.Step, now)
		case agent.EventUsage:
			t.usage(e, now)
		case agent.EventAssistant:
			t.assistant(e, now)
		case agent.EventToolCall:
			ob.startTool(t, e.ToolCall, now)
		case agent.EventToolResult:
			ob.endTool(t, e.ToolResult, now)
		}
	}
	return nil
}

// Close ends every open span (their turns did not report a result) and
// forgets every session. Call it before the provider shuts down.
func (ob *Observer) Close() {
	now := time.Now()
	ob.mu.Lock()
	defer ob.mu.Unlock()
	for id, st := range ob.sessions {
		if st.turn != nil {
			st.turn.abandon("the turn had not ended when tracing stopped", now)
		}
		delete(ob.sessions, id)
	}
}

// turnOf returns the session's running turn n, starting its invoke_agent
// span when it is new.
func (ob *Observer) turnOf(id string, st *sessionTrace, n int, now time.Time) *turnTrace {
	if st.turn != nil && st.turn.n == n {
		return st.turn
	}
	if st.turn != nil {
		st.turn.abandon("a later turn started before this one reported its result", now)
	}
	attrs := append([]attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentName(ob.opts.AgentName),
		semconv.GenAIConversationID(id),
		telemetry.AttrTurn.Int(n),
	}, ob.opts.Attributes...)
	attrs = append(attrs, st.modelAttrs()...)
	if st.resumed {
		attrs = append(attrs, telemetry.AttrSessionResumed.Bool(true))
	}
	if st.parentID != "" {
		attrs = append(attrs, telemetry.AttrSessionParent.String(st.parentID), telemetry.AttrSessionDepth.Int(st.depth))
	}
	ctx, span := ob.tracer.Start(ob.parentOf(st), telemetry.OpInvokeAgent+" "+ob.opts.AgentName,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(now), trace.WithAttributes(attrs...))
	st.turn = &turnTrace{n: n, ctx: ctx, span: span}
	return st.turn
}

// parentOf is the parent context of a turn's span: for a subagent, the
// parent session's open tool call when exactly one is open (the call that
// runs the subagent), else the model call that asked for the open calls
// (several run at once: which one started this subagent is not known),
// else the parent's turn; for a top-level session, the process's parent.
func (ob *Observer) parentOf(st *sessionTrace) context.Context {
	if st.parentID == "" {
		return ob.opts.Parent
	}
	p := ob.sessions[st.parentID]
	if p == nil || p.turn == nil {
		return ob.opts.Parent
	}
	t := p.turn
	switch {
	case len(t.tools) == 1:
		return t.tools[0].ctx
	case t.chatCtx != nil:
		return t.chatCtx
	}
	return t.ctx
}

// modelAttrs are the provider and request model of the session's route.
func (st *sessionTrace) modelAttrs() []attribute.KeyValue {
	var out []attribute.KeyValue
	if st.provider != "" {
		out = append(out, semconv.GenAIProviderNameKey.String(st.provider), telemetry.AttrGenAISystem.String(st.provider))
	}
	if st.model != "" {
		out = append(out, semconv.GenAIRequestModel(st.model))
	}
	return out
}

// startChat starts the span of a model call (a step), ending the last one.
func (ob *Observer) startChat(st *sessionTrace, t *turnTrace, step int, now time.Time) {
	if t.chat != nil {
		if !t.replied && t.chatStep == step {
			// The loop repeats a step without a reply only after the
			// request exceeded the context window (it compacts and
			// retries once).
			t.failChat(string(llm.CodeContextLength), "the request exceeded the context window; the history was compacted and the step retried", now)
		} else {
			t.endChat(now)
		}
	}
	name := telemetry.OpChat
	if st.model != "" {
		name += " " + st.model
	}
	attrs := append([]attribute.KeyValue{semconv.GenAIOperationNameChat, telemetry.AttrStep.Int(step)}, st.modelAttrs()...)
	t.chatCtx, t.chat = ob.tracer.Start(t.ctx, name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(now), trace.WithAttributes(attrs...))
	t.chatStep, t.chatEnd, t.replied, t.finish = step, time.Time{}, false, ""
}

// usage records a model call's token counts and the model the provider
// said answered (none when it named none); the reply has ended.
func (t *turnTrace) usage(e agent.Event, now time.Time) {
	if t.chat == nil {
		return
	}
	if t.chatEnd.IsZero() {
		t.chatEnd = now
	}
	if e.ResponseModel != "" {
		t.chat.SetAttributes(semconv.GenAIResponseModel(e.ResponseModel))
	}
	if e.ResponseID != "" {
		t.chat.SetAttributes(semconv.GenAIResponseID(e.ResponseID))
	}
	if e.Estimated {
		t.chat.SetAttributes(telemetry.AttrUsageEstimated.Bool(true))
	}
	u := e.Usage
	if u == nil {
		return
	}
	t.chat.SetAttributes(semconv.GenAIUsageInputTokens(int(u.PromptTokens)), semconv.GenAIUsageOutputTokens(int(u.CompletionTokens)))
	if u.CacheReported() {
		t.chat.SetAttributes(semconv.GenAIUsageCacheReadInputTokens(int(u.CacheHitTokens)), telemetry.AttrUsageCacheMiss.Int64(u.CacheMissTokens))
	}
	if u.ReasoningTokens > 0 {
		t.chat.SetAttributes(semconv.GenAIUsageReasoningOutputTokens(int(u.ReasoningTokens)))
	}
}

// assistant records that the model call's reply arrived.
func (t *turnTrace) assistant(e agent.Event, now time.Time) {
	if t.chat == nil {
		return
	}
	t.replied = true
	if t.chatEnd.IsZero() {
		t.chatEnd = now
	}
	t.finish = string(llm.FinishStop)
	if e.Message != nil && len(e.Message.ToolCalls) > 0 {
		t.finish = string(llm.FinishToolCalls)
	}
}

// endChat ends the open model call's span at the end of its reply.
func (t *turnTrace) endChat(now time.Time) {
	if t.chat == nil {
		return
	}
	if t.finish != "" {
		t.chat.SetAttributes(semconv.GenAIResponseFinishReasons(t.finish))
	}
	end := t.chatEnd
	if end.IsZero() {
		end = now
	}
	t.chat.End(trace.WithTimestamp(end))
	t.chat = nil
}

// failChat ends the open model call's span as failed.
func (t *turnTrace) failChat(errType, desc string, now time.Time) {
	if t.chat == nil {
		return
	}
	t.chat.SetAttributes(semconv.ErrorTypeKey.String(errType))
	t.chat.SetStatus(codes.Error, clip(desc))
	t.finish = ""
	t.endChat(now)
}

// startTool starts the span of a dispatched tool call, a child of the
// model call that asked for it (whose span ends here).
func (ob *Observer) startTool(t *turnTrace, c *agent.ToolCallEvent, now time.Time) {
	if c == nil {
		return
	}
	t.endChat(now)
	parent := t.chatCtx
	if parent == nil {
		parent = t.ctx
	}
	ctx, span := ob.tracer.Start(parent, telemetry.OpExecuteTool+" "+c.Name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(now),
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(c.Name),
			semconv.GenAIToolCallID(c.ID), semconv.GenAIToolType("function")))
	t.tools = append(t.tools, openTool{id: c.ID, ctx: ctx, span: span})
}

// endTool ends a tool call's span with its outcome: an error status for a
// failed or denied call, error.type its code.
func (ob *Observer) endTool(t *turnTrace, r *agent.ToolResultEvent, now time.Time) {
	if r == nil {
		return
	}
	var span trace.Span
	for i, o := range t.tools {
		if o.id == r.CallID {
			span = o.span
			t.tools = append(t.tools[:i], t.tools[i+1:]...)
			break
		}
	}
	if span == nil { // a result without a dispatched call: a zero-length span
		parent := t.chatCtx
		if parent == nil {
			parent = t.ctx
		}
		_, span = ob.tracer.Start(parent, telemetry.OpExecuteTool+" "+r.Name, trace.WithTimestamp(now),
			trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(r.Name),
				semconv.GenAIToolCallID(r.CallID), semconv.GenAIToolType("function")))
	}
	span.SetAttributes(telemetry.AttrToolDuration.Int64(r.DurationMs))
	switch {
	case r.Denied:
		span.SetAttributes(telemetry.AttrToolDenied.Bool(true), semconv.ErrorTypeKey.String("DENIED"))
		span.SetStatus(codes.Error, "denied by the permission policy")
	case r.IsError:
		code := "_OTHER"
		if r.Error != nil && r.Error.Code != "" {
			code = r.Error.Code
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, "the tool call failed: "+code)
	}
	span.End(trace.WithTimestamp(now))
}

// endTurn ends the turn's spans with its result.
func (ob *Observer) endTurn(id string, st *sessionTrace, e agent.Event, now time.Time) {
	t := ob.turnOf(id, st, e.Turn, now) // a turn refused before its first event starts here
	res := e.Result
	if res == nil {
		res = &agent.Result{}
	}
	switch {
	case t.chat != nil && !t.replied && res.IsError:
		t.failChat(errorType(res), res.Error, now)
	case t.chat != nil && res.Reason == "length":
		t.finish = string(llm.FinishLength)
	}
	t.endChat(now)
	for _, o := range t.tools {
		o.span.SetStatus(codes.Error, "the turn ended before the call's result was recorded")
		o.span.End(trace.WithTimestamp(now))
	}
	t.tools = nil
	t.span.SetAttributes(telemetry.AttrTurnReason.String(res.Reason), telemetry.AttrTurnSteps.Int(res.Steps),
		semconv.GenAIUsageInputTokens(int(res.Usage.PromptTokens)), semconv.GenAIUsageOutputTokens(int(res.Usage.CompletionTokens)))
	if res.IsError {
		t.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(res)))
		t.span.SetStatus(codes.Error, clip(res.Error))
	}
	t.span.End(trace.WithTimestamp(now))
	st.turn = nil
	ob.forgetIdle()
}

// abandon ends a turn's open spans as unfinished.
func (t *turnTrace) abandon(why string, now time.Time) {
	if t.chat != nil {
		t.chat.SetStatus(codes.Error, why)
		t.endChat(now)
	}
	for _, o := range t.tools {
		o.span.SetStatus(codes.Error, why)
		o.span.End(trace.WithTimestamp(now))
	}
	t.tools = nil
	t.span.SetStatus(codes.Error, why)
	t.span.End(trace.WithTimestamp(now))
}

// forgetIdle drops idle sessions past maxIdleSessions.
func (ob *Observer) forgetIdle() {
	if len(ob.sessions) <= maxIdleSessions {
		return
	}
	for id, st := range ob.sessions {
		if st.turn == nil {
			delete(ob.sessions, id)
		}
	}
}

// errorType is a failed turn's error.type: the model error's code
// (llm.Error renders "CODE: …" or "CODE (HTTP n): …"), else ABORTED or
// MAX_STEPS by the turn's reason, else _OTHER.
func errorType(res *agent.Result) string {
	head, _, _ := strings.Cut(res.Error, ":")
	head, _, _ = strings.Cut(head, " ")
	switch c := llm.Code(head); c {
	case llm.CodeAuth, llm.CodeBilling, llm.CodeRateLimit, llm.CodeContextLength, llm.CodeServer,
		llm.CodeNetwork, llm.CodeProtocol, llm.CodeUnsupportedOption, llm.CodeNoAdapter, llm.CodeAborted:
		return string(c)
	}
	switch res.Reason {
	case "aborted":
		return string(llm.CodeAborted)
	case "max_steps":
		return "MAX_STEPS"
	}
	return "_OTHER"
}

// clip bounds a status description.
func clip(s string) string {
	if len(s) <= maxDescription {
		return s
	}
	cut := maxDescription
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
