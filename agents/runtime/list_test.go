package runtime

import (
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

func TestListSome(t *testing.T) {
	h := newHarness(t, passivating)
	t.Cleanup(h.openGates) // before the runtime closes
	h.start("counter", "a", Options{})
	h.mustCall("a", "counter.increment", nil)
	h.waitPassive("a")
	// b and c stay active: a blocked directive runs, n more wait behind it.
	for id, n := range map[string]int{"b": 1, "c": 3} {
		h.start("probe", id, Options{})
		h.mustCall(id, "probe.block", map[string]any{"name": id})
		testkit.Eventually(h.t, id+"'s first block running", func() bool { info, _ := h.rt.State(id); return info.QueueLength == 0 })
		for range n {
			h.mustCall(id, "probe.block", map[string]any{"name": id})
		}
	}

	cases := []struct {
		opts ListOptions
		want []string
	}{
		{ListOptions{}, []string{"a", "b", "c"}},
		{ListOptions{Limit: 2}, []string{"a", "b"}},
		{ListOptions{ByQueue: true}, []string{"c", "b", "a"}},
		{ListOptions{ByQueue: true, Limit: 1}, []string{"c"}},
		{ListOptions{ByQueue: true, Limit: 3}, []string{"c", "b", "a"}},
		{ListOptions{ByQueue: true, Limit: 9}, []string{"c", "b", "a"}},
		{ListOptions{Type: "counter"}, []string{"a"}},
		{ListOptions{Type: "probe", Limit: 1}, []string{"b"}},
		{ListOptions{Type: "probe", ByQueue: true, Limit: 1}, []string{"c"}},
		{ListOptions{Type: "nosuch"}, []string{}},
		{ListOptions{SkipPassive: true}, []string{"b", "c"}},
		{ListOptions{SkipPassive: true, ByQueue: true, Limit: 9}, []string{"c", "b"}},
		{ListOptions{SkipPassive: true, Type: "counter"}, []string{}},
	}
	for _, c := range cases {
		got := []string{}
		for _, info := range h.rt.ListSome(c.opts) {
			got = append(got, info.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ListSome(%+v) = %v, want %v", c.opts, got, c.want)
		}
	}

	busiest := h.rt.ListSome(ListOptions{ByQueue: true})
	if busiest[0].QueueLength != 3 || busiest[1].QueueLength != 1 || busiest[2].Status != StatusPassive {
		t.Errorf("by queue: %+v", busiest)
	}
	if all := h.rt.List(); len(all) != 3 || all[0].ID != "a" || all[0].Status != StatusPassive || all[2].State == nil {
		t.Errorf("List = %+v", all)
	}
}
