package node

import (
	"context"
	"strings"
	"testing"
)

// TestSecondNodeOnOnePrefixIsRefused: two nodes on one NATS server and
// one prefix would both take every signal — each keeps its own log and
// agents — so a call to an agent of one is answered not_found by the
// other, and its acknowledged signals are dead-lettered there. The second
// is refused at start, naming the prefix and what to do; under another
// prefix it starts.
func TestSecondNodeOnOnePrefixIsRefused(t *testing.T) {
	a := startNode(t, t.TempDir())
	defer a.Shutdown(context.Background())
	_, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{URL: a.URL()}, NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "already serves --prefix jido") || !strings.Contains(err.Error(), "--prefix") {
		t.Fatalf("a second node on the prefix of a running one: %v, want it refused naming the prefix", err)
	}
	b, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{URL: a.URL()}, Prefix: "other", NoSync: true})
	if err != nil {
		t.Fatalf("a second node under another prefix: %v", err)
	}
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
