package sandbox

import (
	"slices"
	"testing"
)

// TestProbeOffersOnlyThisPlatformsBackends: on Linux the backends are
// bwrap and landlock, in that order; asking for seatbelt (macOS's) is an
// error that lists Linux's choices, and probes nothing.
func TestProbeOffersOnlyThisPlatformsBackends(t *testing.T) {
	if got := BackendNames(); !slices.Equal(got, []string{BackendBwrap, BackendLandlock}) {
		t.Fatalf("BackendNames() = %q", got)
	}
	b, errs := Probe(BackendSeatbelt)
	if b != nil || len(errs) != 1 || errs[0].Error() != `sandbox backend "seatbelt": must be auto, bwrap or landlock` {
		t.Fatalf("Probe(seatbelt) = %v, %v", b, errs)
	}
}
