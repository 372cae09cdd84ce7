// Package telemetry is the contract of the tracing service: the service
// interface the tracing plugin (plugins/tracing) provides under [Key], the
// harness's span attribute names, and the W3C trace context carried from a
// process to its children (TRACEPARENT, TRACESTATE) and to a fleet job's
// run process (HARNESS_JOB_ID, HARNESS_JOB_ATTEMPT). A plugin that opens
// its own spans (the fleet worker) uses this package, not the plugin.
package telemetry
