package cluster

import (
	"fmt"
	"testing"
)

// TestDesiredOwnerMovesLittle: a node joining takes only partitions from
// the others (none moves between two old nodes), about its share; a node
// leaving gives only its own away.
func TestDesiredOwnerMovesLittle(t *testing.T) {
	const P = 256
	nodes := []string{"n1", "n2", "n3", "n4"}
	before := make([]string, P)
	for p := range P {
		before[p] = desiredOwner(nodes[:3], p)
	}
	moved := 0
	for p := range P {
		after := desiredOwner(nodes, p)
		if after != before[p] {
			if after != "n4" {
				t.Fatalf("partition %d moved from %s to %s when n4 joined", p, before[p], after)
			}
			moved++
		}
	}
	if moved < P/8 || moved > P*3/8 {
		t.Errorf("n4 joining moved %d of %d partitions, want about a quarter", moved, P)
	}
	for p := range P {
		if after := desiredOwner([]string{"n1", "n3"}, p); before[p] != "n2" && after != before[p] {
			t.Fatalf("partition %d moved from %s to %s when n2 left", p, before[p], after)
		}
	}
	if got := desiredOwner(nil, 0); got != "" {
		t.Errorf("no live node: desired %q, want \"\"", got)
	}
}

func TestDesiredOwnerSpreads(t *testing.T) {
	const P = 64
	for n := 2; n <= 5; n++ {
		var nodes []string
		for i := range n {
			nodes = append(nodes, fmt.Sprintf("node-%d", i+1))
		}
		count := map[string]int{}
		for p := range P {
			count[desiredOwner(nodes, p)]++
		}
		for _, id := range nodes {
			if c := count[id]; c < P/n/3 {
				t.Errorf("%d nodes: %s owns %d of %d partitions", n, id, c, P)
			}
		}
	}
}

func TestParseKey(t *testing.T) {
	for _, c := range []struct {
		key    string
		node   string
		p      int
		isNode bool
		ok     bool
	}{
		{"nodes.n1", "n1", 0, true, true},
		{"nodes.a-b_c", "a-b_c", 0, true, true},
		{"partitions.0", "", 0, false, true},
		{"partitions.63", "", 63, false, true},
		{"partitions.07", "", 0, false, false},
		{"partitions.-1", "", 0, false, false},
		{"partitions.x", "", 0, false, false},
		{"nodes.a.b", "", 0, false, false},
		{"config", "", 0, false, false},
	} {
		node, p, isNode, ok := parseKey(c.key)
		if node != c.node || p != c.p || isNode != c.isNode || ok != c.ok {
			t.Errorf("parseKey(%q) = %q %d %v %v, want %q %d %v %v", c.key, node, p, isNode, ok, c.node, c.p, c.isNode, c.ok)
		}
	}
}
