package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
)

// TestAProjectWithoutAModelIsToldHowToGetOne: a folder opened without
// .jido/config.yaml (or with one naming no provider) answers a message
// with one failure that says where the setting goes and what writes it;
// the engine's own events on the way are all committed — its
// conversation.llm.requested with no provider was refused by its own
// schema and filed as a dead letter (invalid_event).
func TestAProjectWithoutAModelIsToldHowToGetOne(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	for i, config := range []string{"", "llm: {model: gpt-4o-mini}\n"} {
		root := t.TempDir()
		if config != "" {
			if err := os.MkdirAll(filepath.Join(root, ".jido"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ".jido", "config.yaml"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		id := []string{"bare", "noprovider"}[i]
		if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: id}); err != nil {
			t.Fatal(err)
		}
		key := id + "/c1"
		if _, err := n.convSend(ctx, []byte(`{"conv":"`+key+`","text":"hello"}`)); err != nil {
			t.Fatal(err)
		}
		failed := awaitEvent(t, n, key, conversation.LLMFailed, nil)
		msg := string(failed.Event.Data())
		for _, want := range []string{filepath.Join(root, ".jido", "config.yaml"), "provider: openai", "jido-bus project init " + root, "openai, anthropic"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the failure does not say %q: %s", id, want, msg)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: the failure is not one line: %q", id, msg)
		}
		awaitEvent(t, n, key, conversation.LLMRequested, nil)
	}
	for e, err := range n.Log().ReadStream("dlq", eventlog.ReadOptions{}) {
		if errors.Is(err, eventlog.ErrNotFound) {
			break // no dead letter at all
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("the engine dead-lettered its own event: %s", e.Event.Data())
	}
}
