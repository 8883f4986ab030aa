package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestConversationEventsLive: with the real binary and the real NATS CLI,
// a subscriber of jido.emit.<key>.> sees the user message conv send
// committed, with its stream sequence in Jido-Seq (the one log show
// gives it), then the conversation.cancel that conv cancel appends; conv
// chat on piped input that ends at once leaves with exit 0.
func TestConversationEventsLive(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	const conv = "demo/c1"
	on := []string{"--nats-url", node.URL}
	tools.Run(t, append([]string{"agent", "start", "conversation", "--id", conv}, on...)...)
	tools.Run(t, append([]string{"conv", "send", conv, "first"}, on...)...)

	sub, subDone := node.StartNATS(t, "sub", "jido.emit."+conv+".conversation.>", "--count", "2")
	testkit.Eventually(t, "the emit subscription", func() bool { return strings.Contains(sub.String(), "Subscribing") })
	tools.Run(t, append([]string{"conv", "send", conv, "hello live"}, on...)...)
	if out := tools.Run(t, append([]string{"conv", "cancel", conv, "--reason", "enough"}, on...)...); !strings.Contains(out, "cancelled the turn of "+conv) {
		t.Fatalf("conv cancel: %q", out)
	}
	if err := subDone(); err != nil {
		t.Fatalf("nats sub: %v\n%s", err, sub.String())
	}
	got := sub.String()
	for _, want := range []string{"jido.emit." + conv + ".conversation.user.message", "hello live", "Jido-Stream: conversation/" + conv,
		"jido.emit." + conv + ".conversation.cancel", "enough"} {
		if !strings.Contains(got, want) {
			t.Fatalf("nats sub did not see %q:\n%s", want, got)
		}
	}
	seqs := regexp.MustCompile(`Jido-Seq: (\d+)`).FindAllStringSubmatch(got, -1)
	if len(seqs) != 2 {
		t.Fatalf("nats sub saw %d Jido-Seq headers, want 2:\n%s", len(seqs), got)
	}
	// The same sequences in the log, where cancel is recorded.
	show := tools.Run(t, append([]string{"log", "show", "conversation/" + conv, "-o", "json"}, on...)...)
	for _, s := range seqs {
		if !strings.Contains(show, `"seq":`+s[1]+`,`) {
			t.Fatalf("log show has no entry at seq %s:\n%s", s[1], show)
		}
	}
	if !strings.Contains(show, "conversation.cancel") {
		t.Fatalf("log show has no conversation.cancel:\n%s", show)
	}

	// Refusals through the binary: exit 3 and what to do.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.JidoBus, append([]string{"conv", "approve", conv, "k1"}, on...)...)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 3 || !strings.Contains(string(out), "not awaiting approval") {
		t.Fatalf("conv approve of nothing: exit %d %v\n%s", code, err, out)
	}

	// conv chat with no input line: subscribed, and gone at once.
	cmd = exec.CommandContext(ctx, tools.JidoBus, append([]string{"conv", "chat", "demo", "c1"}, on...)...)
	cmd.Stdin = bytes.NewReader(nil)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "conversation "+conv) {
		t.Fatalf("conv chat on empty input: %v\n%s", err, out)
	}
}
