package runtime

import (
	"slices"
	"testing"
	"time"
)

// TestListPassiveVersionAndPaging: List shows a passive agent at its real
// version, whether it went passive in this run or came back passive from
// the log, and After pages in id order.
func TestListPassiveVersionAndPaging(t *testing.T) {
	h := newHarness(t, passivating)
	h.start("counter", "a", Options{})
	for range 3 {
		h.mustCall("a", "counter.increment", nil)
	}
	h.start("counter", "b", Options{})
	h.start("counter", "c", Options{})
	h.waitPassive("a")
	check := func(when string) {
		t.Helper()
		for _, info := range h.rt.List() {
			if info.ID == "a" && (info.Status != StatusPassive || info.Version != 3) {
				t.Fatalf("%s: a listed %s at version %d, want passive at 3", when, info.Status, info.Version)
			}
		}
	}
	check("passivated")
	h.cfg.PassivateAfter = time.Hour
	h.restart()
	check("recovered passive")

	var ids []string
	for _, after := range []string{"", "a", "b", "c"} {
		for _, info := range h.rt.ListSome(ListOptions{After: after, Limit: 1}) {
			ids = append(ids, info.ID)
		}
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("paged by one: %v", ids)
	}
}
