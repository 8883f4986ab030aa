package jslog

import (
	"strconv"
	"testing"
)

func TestRootID(t *testing.T) {
	cases := []struct{ stream, root string }{
		{"agent/p", "p"},
		{"agent/p/child", "p"},
		{"agent/p/child/grandchild", "p"},
		{"conversation/p/c", "p"},
		{"runtime/agents", "agents"},
		{"dlq", "dlq"},
	}
	for _, c := range cases {
		if got := RootID(c.stream); got != c.root {
			t.Errorf("RootID(%q) = %q, want %q", c.stream, got, c.root)
		}
	}
}

func TestPartition(t *testing.T) {
	// A parent, its children and its conversations share a partition.
	family := []string{"agent/p", "agent/p/child", "agent/p/child/x", "conversation/p/c", "project/p"}
	for _, s := range family {
		if Partition(s, 64) != Partition(family[0], 64) {
			t.Errorf("%s is in partition %d, agent/p in %d", s, Partition(s, 64), Partition(family[0], 64))
		}
	}
	// The function is part of the stored layout: pin it (FNV-1a 32 of
	// the root id, mod P), so that a change to it fails here rather than
	// moving every agent of an existing cluster.
	pinned := map[string]int{"agent/p": 0xf50c43ef % 64, "agent/c1": 0x8829dfd9 % 64, "agent/abc": 0x1a47e90b % 64}
	for s, want := range pinned {
		if got := Partition(s, 64); got != want {
			t.Errorf("Partition(%q, 64) = %d, want %d", s, got, want)
		}
	}
	// Roots spread over every partition.
	hit := make([]int, 16)
	for i := range 1600 {
		hit[Partition("agent/a"+strconv.Itoa(i), 16)]++
	}
	for p, n := range hit {
		if n == 0 {
			t.Errorf("partition %d of 16 holds none of 1600 roots", p)
		}
	}
}

func TestSubjectTokens(t *testing.T) {
	cases := map[string]string{
		"agent/p":          "agent.p",
		"agent/p/c-1":      "agent.p.c-1",
		"agent/v1.2/x_y":   "agent.v1~2.x_y",
		"conversation/p/c": "conversation.p.c",
	}
	for in, want := range cases {
		if got := subjectTokens(in); got != want {
			t.Errorf("subjectTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIndexStreamBelongsToItsPartition(t *testing.T) {
	for _, parts := range []int{1, 7, 16} {
		for p := range parts {
			if got := Partition(IndexStream(p), parts); got != p {
				t.Errorf("Partition(%q, %d) = %d, want %d", IndexStream(p), parts, got, p)
			}
		}
	}
	// Names that only look like one are hashed as usual.
	for _, s := range []string{"runtime/agents/01", "runtime/agents/x", "runtime/agents/-1"} {
		if got, want := Partition(s, 16), Partition("agent/agents", 16); got != want {
			t.Errorf("Partition(%q) = %d, want the hash of its root %d", s, got, want)
		}
	}
}
