package a2a

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/views"
)

// turnScript builds the events of one turn as the loop and the executor
// log and publish them: the user message "u1", then for each step an LLM
// request, its deltas (chunks of its text), its answer, and for the first
// step a read_file call. Deltas carry no seq; number gives the logged
// events theirs, in the order a case puts them.
type turnScript struct{ texts []string }

func (s turnScript) req(step, attempt int) string { return fmt.Sprintf("llm.u1.%d.%d", step, attempt) }

func (s turnScript) chunks(step int) []string {
	var out []string
	for text := s.texts[step-1]; len(text) > 0; {
		n := min(5, len(text))
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func (s turnScript) delta(step, attempt, index int) *views.Event {
	req := s.req(step, attempt)
	return &views.Event{Type: conversation.AssistantDelta, ID: fmt.Sprintf("%s.delta.%d", req, index), CausationID: req, Data: conversation.Data{Text: s.chunks(step)[index], Index: index}}
}

func (s turnScript) deltas(step, attempt int) []*views.Event {
	var out []*views.Event
	for i := range s.chunks(step) {
		out = append(out, s.delta(step, attempt, i))
	}
	return out
}

func logged(typ, id, causation string, d conversation.Data) *views.Event {
	return &views.Event{Type: typ, ID: id, CausationID: causation, Time: time.Unix(1700000000, 0), Data: d}
}

func (s turnScript) requested(step, attempt int) *views.Event {
	return logged(conversation.LLMRequested, s.req(step, attempt), "u1", conversation.Data{Step: step, Attempt: attempt})
}

// answer is the logged answer of a step with text (the step's text when
// text is "") and its llm.completed; the first step calls read_file,
// whose call runs to its end.
func (s turnScript) answer(step, attempt int, text string) []*views.Event {
	req := s.req(step, attempt)
	if text == "" {
		text = s.texts[step-1]
	}
	tools := 0
	if step < len(s.texts) {
		tools = 1
	}
	out := []*views.Event{logged(conversation.AssistantMessage, req+".message", req, conversation.Data{Text: text, ToolCalls: tools})}
	if tools > 0 {
		call := fmt.Sprintf("call%d", step)
		out = append(out, logged(conversation.ToolRequested, req+".call.1", req, conversation.Data{CallID: call, Name: "read_file"}))
	}
	out = append(out, logged(conversation.LLMCompleted, req+".completed", req, conversation.Data{ToolCalls: tools}))
	if tools > 0 {
		call := fmt.Sprintf("call%d", step)
		out = append(out,
			logged(conversation.ToolStarted, "tool."+call+".started", call, conversation.Data{CallID: call}),
			logged(conversation.ToolCompleted, "tool."+call+".completed", call, conversation.Data{CallID: call}))
	}
	return out
}

func (s turnScript) failed(step, attempt int) *views.Event {
	req := s.req(step, attempt)
	return logged(conversation.LLMFailed, req+".failed", req, conversation.Data{Attempt: attempt, Retryable: true, RetryInMS: 10, Error: &bus.Error{Type: "stream", Message: "the stream was cut"}})
}

// number gives the logged events their seqs, after the first seqs the
// conversation's start and the user message hold.
func number(evs []*views.Event) []*views.Event {
	seq := uint64(2)
	for _, ev := range evs {
		if ev.Type != conversation.AssistantDelta {
			seq++
			ev.Seq = seq
		}
	}
	return evs
}

func cat(parts ...any) []*views.Event {
	var out []*views.Event
	for _, p := range parts {
		switch v := p.(type) {
		case *views.Event:
			out = append(out, v)
		case []*views.Event:
			out = append(out, v...)
		}
	}
	return out
}

// clientTask applies A2A stream events as the SDKs' task managers do.
type clientTask struct {
	task     *sdk.Task
	creates  map[sdk.ArtifactID]int // updates without append, per artifact
	problems []string
}

func (c *clientTask) apply(ev sdk.Event) {
	switch e := ev.(type) {
	case *sdk.TaskStatusUpdateEvent:
		c.task.Status = e.Status
	case *sdk.TaskArtifactUpdateEvent:
		if len(e.Artifact.Parts) == 0 || e.Artifact.Parts[0].Text() == "" {
			c.problems = append(c.problems, fmt.Sprintf("an update of %s without text", e.Artifact.ID))
		}
		i := slices.IndexFunc(c.task.Artifacts, func(a *sdk.Artifact) bool { return a.ID == e.Artifact.ID })
		switch {
		case !e.Append:
			c.creates[e.Artifact.ID]++
			if i < 0 {
				c.task.Artifacts = append(c.task.Artifacts, e.Artifact)
			} else {
				c.task.Artifacts[i] = e.Artifact
			}
		case i < 0:
			c.problems = append(c.problems, fmt.Sprintf("an append to %s, never created", e.Artifact.ID))
		default:
			a := *c.task.Artifacts[i]
			a.Parts = append(slices.Clone(a.Parts), e.Artifact.Parts...)
			c.task.Artifacts[i] = &a
		}
	}
}

func texts(arts []*sdk.Artifact) []string {
	var out []string
	for _, a := range arts {
		var b strings.Builder
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
		out = append(out, string(a.ID)+"="+b.String())
	}
	return out
}

// TestStreamEndsWithWhatGetTaskReturns (issue 21, item 13): whatever the
// deltas do — all in order, one missed, one after its answer is logged,
// one of the next answer before the answer it follows, a retried
// attempt, a subscription mid-answer, none at all, an answer cut in the
// log — a client applying A2A's artifact rules to the stream ends with
// exactly the artifacts GetTask returns: one per answer of the model,
// never an answer appended twice, never an update without text or an
// append to an artifact not created. creates counts the updates that
// write an artifact whole: 1 when what the client holds is the start of
// the logged text (the rest is appended), 2 when it holds another text (a
// failed attempt's, or an answer the log holds cut).
func TestStreamEndsWithWhatGetTaskReturns(t *testing.T) {
	s := turnScript{texts: []string{"Let me read a.txt.", "a.txt says hello, and that is all."}}
	d1, d2 := s.deltas(1, 1), s.deltas(2, 1)
	cut := s.texts[1][:10] + "\n[cut: the answer was over the limit]"
	for _, tc := range []struct {
		name    string
		events  []*views.Event
		creates []int
	}{
		{"in order", cat(s.requested(1, 1), d1, s.answer(1, 1, ""), s.requested(2, 1), d2, s.answer(2, 1, "")), []int{1, 1}},
		{"a delta missed", cat(s.requested(1, 1), d1, s.answer(1, 1, ""), s.requested(2, 1), d2[:2], d2[3:], s.answer(2, 1, "")), []int{1, 1}},
		{"a delta after its answer", cat(s.requested(1, 1), d1[:3], s.answer(1, 1, ""), d1[3], s.requested(2, 1), d2, s.answer(2, 1, "")), []int{1, 1}},
		{"the next answer's delta first", cat(s.requested(1, 1), d1, d2[0], s.answer(1, 1, ""), s.requested(2, 1), d2[1:], s.answer(2, 1, "")), []int{1, 1}},
		{"deltas before their request is logged", cat(d1[:2], s.requested(1, 1), d1[2:], s.answer(1, 1, ""), d2, s.requested(2, 1), s.answer(2, 1, "")), []int{1, 1}},
		{"a retried attempt", cat(s.requested(1, 1), d1[:2], s.failed(1, 1), s.requested(1, 2), s.deltas(1, 2), s.answer(1, 2, ""), s.requested(2, 1), d2, s.answer(2, 1, "")), []int{2, 1}},
		{"subscribed mid-answer", cat(s.requested(1, 1), d1[2:], s.answer(1, 1, ""), s.requested(2, 1), d2, s.answer(2, 1, "")), []int{1, 1}},
		{"no deltas", cat(s.requested(1, 1), s.answer(1, 1, ""), s.requested(2, 1), s.answer(2, 1, "")), []int{1, 1}},
		{"an answer cut in the log", cat(s.requested(1, 1), d1, s.answer(1, 1, ""), s.requested(2, 1), d2, s.answer(2, 1, cut)), []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newContextFold("c1")
			f.fold(&views.Event{Type: conversation.Started, ID: "s", Seq: 1, Data: conversation.Data{Assistant: true}})
			f.fold(&views.Event{Type: conversation.UserMessage, ID: "u1", Seq: 2, Data: conversation.Data{Text: "What does a.txt say?"}})
			task := f.latest()
			c := &clientTask{task: f.task(task, nil), creates: map[sdk.ArtifactID]int{}}
			st := newStreamer(task, "c1", sdk.TaskStateSubmitted)
			for _, ev := range number(tc.events) {
				f.fold(ev)
				for _, out := range st.events(f, task, ev) {
					c.apply(out)
				}
			}
			got := f.task(task, nil)
			if got.Status.State != sdk.TaskStateCompleted || c.task.Status.State != sdk.TaskStateCompleted {
				t.Fatalf("the task is %s, the client's %s: want completed", got.Status.State, c.task.Status.State)
			}
			if want, have := texts(got.Artifacts), texts(c.task.Artifacts); !slices.Equal(want, have) {
				t.Fatalf("the client holds\n%q\nGetTask returns\n%q", have, want)
			}
			if len(c.problems) > 0 {
				t.Fatalf("the stream: %v", c.problems)
			}
			for i, a := range got.Artifacts {
				if c.creates[a.ID] != tc.creates[i] {
					t.Errorf("artifact %s was written whole %d times, want %d", a.ID, c.creates[a.ID], tc.creates[i])
				}
			}
		})
	}
}
