// Package tracing is the tracing plugin: OpenTelemetry spans for agent
// runs, model calls and tool calls, following the OpenTelemetry semantic
// conventions for generative AI, exported over OTLP when the standard
// OTEL_* environment variables ask for it. It is off by default.
//
//	TRACEPARENT (env) ─┐              one trace per run (or per job: see below)
//	                   ▼
//	invoke_agent harness        a turn: gen_ai.conversation.id = session id,
//	 │                          harness.job.id / harness.job.attempt in a job
//	 ├─ chat test/m1            a model call: request and response model, usage, finish reasons
//	 │   └─ execute_tool bash   the tool calls that reply asked for
//	 ├─ chat test/m1
//	 │   ├─ execute_tool read
//	 │   └─ execute_tool task
//	 │       └─ invoke_agent …  a subagent's turn (under the chat span when
//	 │                          several calls run at once)
//	 └─ chat test/m1
//
// The spans are built from the agent's event stream ([agent.Observed]), so
// the agent loop knows nothing about tracing. A model call's span ends when
// its reply ended; the tool calls it asked for are its children (they run
// after it: a child may end after its parent). A tool span runs from the
// moment the call was dispatched to the moment its result was recorded
// (results are recorded in model order; the body's own duration is the
// attribute harness.tool.duration_ms).
//
// # When it exports
//
// The plugin exports only when the environment says so, as the
// OpenTelemetry SDK specification defines the variables:
//
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off.
//   - OTEL_TRACES_EXPORTER=otlp: on.
//   - OTEL_TRACES_EXPORTER unset: on when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, off otherwise (the SDK's
//     own default would be "otlp" to localhost:4318; a CLI must not try to
//     connect anywhere unless asked).
//
// The protocol (OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL) is http/protobuf
// (default) or grpc, the latter only in a binary built with -tags
// otlpgrpc. The endpoint, headers, timeout, compression and TLS files are
// read by the exporter from the OTEL_EXPORTER_OTLP_* variables; the sampler from OTEL_TRACES_SAMPLER; the batch processor
// from OTEL_BSP_*; the resource from OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES (service.name defaults to "harness"). Header
// values (credentials) are never logged nor printed.
//
// Off, the plugin starts no exporter and no goroutine and listens to no
// event: the agent's cost is one empty listener lookup per event.
//
// # Trace context
//
// A run's root spans are children of the W3C trace context in the
// TRACEPARENT (and TRACESTATE) environment variables when set, as CI
// systems and the fleet worker set them. A fleet job's worker opens a
// span per attempt and passes its context to the job's run process in
// TRACEPARENT, so the worker's and the run's spans form one trace; the run
// process reads the job's id and attempt from HARNESS_JOB_ID and
// HARNESS_JOB_ATTEMPT. The worker's span is itself a child of the trace
// context the job was submitted under (`harness submit` stores its
// TRACEPARENT with the job), so a submitter's trace covers its jobs.
//
// # Privacy
//
// No prompt, completion, tool argument or tool result is recorded: spans
// carry names, ids, models, token counts, durations and error codes.
package tracing
