package systemprompt

import (
	"math"
	"slices"
	"testing"
)

func TestSectionOrderTableIsUniqueIntegersTenApart(t *testing.T) {
	var orders []float64
	for _, v := range sectionOrders {
		if v != math.Trunc(v) {
			t.Fatalf("order %v is not an integer", v)
		}
		orders = append(orders, v)
	}
	slices.Sort(orders)
	for i := 1; i < len(orders); i++ {
		if orders[i]-orders[i-1] < 10 {
			t.Fatalf("orders %v and %v are closer than 10", orders[i-1], orders[i])
		}
	}
}

func TestSectionOrderSlots(t *testing.T) {
	cases := []struct {
		name OrderName
		want float64
	}{
		{OrderIdentity, -1000}, {OrderPersonaPrefix, 0}, {OrderToolBash, 1000}, {OrderToolRead, 1100},
		{OrderToolWrite, 1200}, {OrderToolEdit, 1300}, {OrderToolGlob, 1400}, {OrderToolGrep, 1500},
		{OrderHarnessSource, 10000}, {OrderPersonaSuffix, 10200},
	}
	for _, tc := range cases {
		if got := SectionOrder(tc.name); got != tc.want {
			t.Errorf("SectionOrder(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := SectionOrder("no-such-slot"); !math.IsNaN(got) {
		t.Errorf("unknown slot = %v, want NaN", got)
	}
	if got := ContextOrder(ContextOrderApprovalPolicy); got != 115 {
		t.Errorf("ContextOrder(approval-policy) = %v", got)
	}
	if got := ContextOrder("nope"); !math.IsNaN(got) {
		t.Errorf("unknown context slot = %v, want NaN", got)
	}
}
