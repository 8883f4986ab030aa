package assistant

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/conversation/views"
)

func msg(role string, seq uint64, tokens int, calls ...string) views.Message {
	m := views.Message{Role: role, Seq: seq, Tokens: tokens, Content: role}
	for _, c := range calls {
		if role == views.RoleTool {
			m.ToolCallID = c
			continue
		}
		m.ToolCalls = append(m.ToolCalls, views.MessageCall{ID: c, Name: "read_file"})
	}
	return m
}

// TestPlanCompaction: the system message and the task are never
// replaced, an earlier summary is; the last turn is kept whole and at
// least keep tokens; a cut never parts a tool call from its result;
// nothing is planned when only a summary could go.
func TestPlanCompaction(t *testing.T) {
	task := msg(views.RoleUser, 2, 10)
	task.Pin = views.PinTask
	list := []views.Message{
		msg(views.RoleSystem, 1, 5), task,
		msg(views.RoleAssistant, 3, 10, "a"), msg(views.RoleTool, 5, 50, "a"),
		msg(views.RoleAssistant, 6, 10, "b"), msg(views.RoleTool, 7, 50, "b"),
		msg(views.RoleUser, 8, 10), msg(views.RoleAssistant, 9, 10),
	}
	c, ok := planCompaction(list, 0)
	if !ok || c.from != 3 || c.to != 7 || len(c.replaced) != 4 || c.tokens != 120 || c.answers != 2 {
		t.Fatalf("keep 0: %+v %v, want seq 3..7 replaced (the last turn kept)", c, ok)
	}
	// Keeping 70 tokens keeps the second call and its result too.
	if c, ok = planCompaction(list, 70); !ok || c.to != 5 || len(c.replaced) != 2 {
		t.Fatalf("keep 70: %+v %v, want seq 3..5", c, ok)
	}
	if _, ok = planCompaction(list, 1000); ok {
		t.Fatal("keeping more than there is planned a compaction")
	}
	// One long turn: no user message but the task; the last call and its
	// result stay together.
	long := list[:6]
	if c, ok = planCompaction(long, 0); !ok || c.to != 5 {
		t.Fatalf("one turn: %+v %v, want seq 3..5", c, ok)
	}
	sum := views.Message{Role: views.RoleUser, Seq: 7, Tokens: 20, Pin: views.PinSummary, Content: fmt.Sprintf(views.SummaryHeading, 4, 2) + "s"}
	if _, ok = planCompaction([]views.Message{list[0], task, sum, msg(views.RoleUser, 8, 10), msg(views.RoleAssistant, 9, 10)}, 0); ok {
		t.Fatal("a lone summary was planned for compaction")
	}
	c, ok = planCompaction([]views.Message{list[0], task, sum, msg(views.RoleAssistant, 8, 10), msg(views.RoleUser, 10, 10), msg(views.RoleAssistant, 11, 10)}, 0)
	if !ok || c.from != 7 || c.to != 8 || c.answers != 3 {
		t.Fatalf("with a summary: %+v %v, want the summary and seq 8", c, ok)
	}
	if tr := transcript(c.replaced); !strings.Contains(tr, "Earlier summary:\n[Summary") || !strings.Contains(tr, "Assistant:") {
		t.Fatalf("transcript: %q", tr)
	}
}
