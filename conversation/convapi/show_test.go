package convapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// TestConvShowNamesTheOperatorsMistake: what an operator types by
// mistake gets an answer that says what to type instead.
func TestConvShowNamesTheOperatorsMistake(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, store := openLogAndStore(t, dir)
	if _, err := l.Append(ctx, conversation.Stream("p1/c1"), eventlog.NoStream, event(t, conversation.Started, "e1", `{"project_id":"p1","conversation_id":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "agent/c1", eventlog.NoStream, event(t, "counter.increment", "x1", `{"by":1}`)); err != nil {
		t.Fatal(err)
	}
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	local := convapi.Reader{Runner: r, Log: l}
	tests := []struct {
		conv     string
		typ      string
		contains string
	}{
		// The stream's name, copied from `jido-bus log ls`.
		{"conversation/p1/c1", bus.ReasonInvalidRequest, "is a stream name; the conversation is p1/c1"},
		// Another stream's name: it parses as a conversation that is not.
		{"agent/c1", bus.ReasonNotFound, "no conversation agent/c1: its stream conversation/agent/c1 holds no conversation event"},
	}
	for _, tt := range tests {
		_, err := local.Show(ctx, convapi.ShowRequest{Conv: tt.conv})
		if !errors.Is(err, &bus.Error{Type: tt.typ}) || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("conv show %s: %v, want %s with %q", tt.conv, err, tt.typ, tt.contains)
		}
	}
}
