package tools

import "time"

// DisableFastCheck drops t's accept-only argument check, so tests can compare
// Execute with and without it.
func DisableFastCheck(t *Tool) *Tool {
	if t.args != nil {
		c := *t.args
		c.fast = nil
		t.args = &c
	}
	return t
}

// FastPathSample generates, from seed bytes, a schema of the fast check's
// keyword subset and two argument texts.
func FastPathSample(data []byte) (schema string, args []string) {
	g := &gen{b: data}
	schema = g.genSchema(0)
	return schema, []string{g.genValue(0), g.genValue(0), "{}", ""}
}

// SetProgressClock makes r read the time from now (nil-safe), so tests
// step the rate limit without sleeping.
func SetProgressClock(r *ProgressReporter, now func() time.Time) {
	if r != nil {
		r.now = now
	}
}
