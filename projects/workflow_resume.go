package projects

// Durable workflows: a workflow's run survives the node's crash.
//
// Where its progress lives. A workflow call's start (its inputs as args)
// and each step's start and outcome are entries of the project's stream
// already (project.tool.started, then .completed or .failed, the steps'
// with parent = the workflow's call id), each committed before anything
// acts on it; a step's completion also carries what the step returned
// (its output, or its artifact's stand-in: what the workflow itself
// reads), committed before the next step starts. That is the whole state
// of a run, so there is no second record to keep in step with the first:
// a restart reads the stream. The cost is one read of the project's tool
// entries at each start, before the project takes calls.
//
// What a restart does (Restore → resumeWorkflows), for each top-level
// workflow call started and never answered:
//
//   - its completed steps are done: their outputs are used, they are not
//     run again;
//   - a step started with no outcome was running when the node stopped.
//     It is recorded failed, interrupted. If it changes nothing (its tool
//     only reads and calls no other) or its workflow says idempotent: true
//     for it, it runs again as the workflow goes on; otherwise it may
//     have written a file or run a program already, so it is not run a
//     second time: the workflow is recorded failed, interrupted, naming
//     the step to check, and no later step runs;
//   - the rest of the steps run through the project's runner as children
//     of the same call id (Runner.Resume), and the call's outcome is
//     recorded as if it had never stopped.
//
// The caller's request died with the node; the outcome is in the stream
// (jido-bus log read project/<id>, the call's id is the one the caller
// gave with --call-id or got back in the started entry). A call made by
// a conversation is not resumed: the node's start tells the conversation
// its call was interrupted (convapi.Resume), and a model told so may call
// the workflow again, which a resumed run going on unseen would double.
// Its run is recorded failed, interrupted, naming the steps that ran.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// ReasonInterrupted is the failure of a call the node's stop cut short.
const ReasonInterrupted = "interrupted"

// openRun is a workflow call found started and unanswered in the stream.
type openRun struct {
	call  ToolData
	at    time.Time
	steps []*openStep // in the order they started
}

type openStep struct {
	start   ToolData
	at      time.Time
	outcome string // "", TypeToolCompleted or TypeToolFailed
	output  json.RawMessage
}

// openRuns reads project id's stream for the workflow calls that have a
// start and no outcome, in the order they started.
func (e *Engine) openRuns(id string) ([]*openRun, error) {
	open := map[string]*openRun{}
	var order []string
	for en, err := range e.cfg.Log.ReadStream(Stream(id), eventlog.ReadOptions{Types: "project.tool.*"}) {
		if err != nil {
			return nil, err
		}
		var d ToolData
		if err := json.Unmarshal(en.Event.Data(), &d); err != nil {
			return nil, fmt.Errorf("%s at %d: %w", en.Event.Type(), en.Seq, err)
		}
		typ := en.Event.Type()
		if d.Parent == "" {
			if typ == TypeToolStarted && strings.HasPrefix(d.Tool, assets.KindWorkflow+"_") {
				open[d.CallID] = &openRun{call: d, at: en.Time}
				order = append(order, d.CallID)
			} else if typ != TypeToolStarted {
				delete(open, d.CallID)
			}
			continue
		}
		run, ok := open[d.Parent]
		if !ok {
			continue
		}
		if typ == TypeToolStarted {
			run.steps = append(run.steps, &openStep{start: d, at: en.Time})
			continue
		}
		for _, s := range run.steps {
			if s.start.CallID == d.CallID {
				s.outcome, s.output = typ, d.Output
			}
		}
	}
	var runs []*openRun
	for _, c := range order {
		if r, ok := open[c]; ok {
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// resumeWorkflows takes up project p's unfinished workflow calls (see
// the top of this file). It decides on this goroutine and runs the rest
// of each workflow on its own, until the engine closes.
func (e *Engine) resumeWorkflows(ctx context.Context, p *project) {
	if e.cfg.Log == nil {
		return
	}
	runs, err := e.openRuns(p.id)
	if err != nil {
		e.log.Error("project's stream unreadable; its unfinished workflows are not resumed", "project", p.id, "err", err)
		return
	}
	for _, run := range runs {
		done, err := e.resumable(ctx, p, run)
		if err != nil {
			e.failRun(ctx, p.id, run, err)
			continue
		}
		tc := tools.ToolCall{ID: run.call.CallID, Name: run.call.Tool, Args: run.call.Args}
		e.log.Info("workflow resumed", "project", p.id, "call", tc.ID, "tool", tc.Name, "steps_done", len(done))
		started := e.resuming.Go(func() {
			res, err := p.runner.Resume(e.runCtx, tc, done)
			if err != nil {
				e.log.Warn("resumed workflow failed", "project", p.id, "call", tc.ID, "err", err)
				return
			}
			e.log.Info("resumed workflow completed", "project", p.id, "call", res.CallID)
		})
		if !started {
			// The engine closes: the run stays unfinished in the log and
			// the next start resumes it.
			e.log.Info("workflow not resumed: the engine is closing", "project", p.id, "call", tc.ID)
			return
		}
	}
}

// resumable decides whether run may go on, and from which steps; it
// records the interrupted step's failure. An error is the run's failure.
func (e *Engine) resumable(ctx context.Context, p *project, run *openRun) ([]assets.StepOutput, error) {
	name := run.call.Tool
	var w *assets.Workflow
	for _, cand := range p.set.Load().Workflows {
		if assets.ToolName(assets.KindWorkflow, cand.Name) == name {
			w = cand
		}
	}
	var done []assets.StepOutput
	var ran []string
	for i, s := range run.steps {
		if s.outcome != TypeToolCompleted {
			break
		}
		id := fmt.Sprint(i + 1)
		if w != nil && i < len(w.Steps) {
			id = w.Steps[i].ID
		}
		var out any
		if err := json.Unmarshal(s.output, &out); err != nil || len(s.output) == 0 {
			return nil, bus.Errorf(ReasonInterrupted, "the node stopped while %s ran, and step %d (%s) has no recorded output (recorded by an older node), so the run cannot go on; check what its steps did, then run it again", name, i+1, s.start.Tool)
		}
		done = append(done, assets.StepOutput{ID: id, Tool: s.start.Tool, Output: out})
		ran = append(ran, fmt.Sprintf("%q (%s)", id, s.start.Tool))
	}
	doneText := "no step had completed"
	if len(ran) > 0 {
		doneText = "completed: " + strings.Join(ran, ", ")
	}
	var cut *openStep
	if len(done) < len(run.steps) {
		s := run.steps[len(done)]
		if s.outcome == TypeToolFailed {
			return nil, bus.Errorf(ReasonInterrupted, "the node stopped after step %d (%s) of %s failed and before the workflow's own failure was recorded; see that step's project.tool.failed (call %s); %s", len(done)+1, s.start.Tool, name, s.start.CallID, doneText)
		}
		cut = s
	}
	stepName := func() string {
		if w != nil && len(done) < len(w.Steps) {
			return fmt.Sprintf("%q (%d of %d, %s)", w.Steps[len(done)].ID, len(done)+1, len(w.Steps), cut.start.Tool)
		}
		return fmt.Sprintf("%d (%s)", len(done)+1, cut.start.Tool)
	}
	again := false
	if cut != nil {
		again = p.runner.Catalog().ChangesNothing(cut.start.Tool) ||
			(w != nil && len(done) < len(w.Steps) && w.Steps[len(done)].Tool == cut.start.Tool && w.Steps[len(done)].Idempotent)
		why := "it is run again as the workflow resumes (it changes nothing, or its workflow says idempotent: true)"
		if !again || run.call.Conversation != "" {
			why = "it is not run again: it may have written files or run a program already"
		}
		if err := e.sendAll(ctx, p.id, entry{TypeToolFailed, ToolData{
			CallID: cut.start.CallID, Parent: cut.start.Parent, Conversation: cut.start.Conversation, Tool: cut.start.Tool,
			DurationMS: durationMS(time.Since(cut.at)), Result: ReasonInterrupted,
			Error: &tools.Error{Type: ReasonInterrupted, Message: fmt.Sprintf("step %s of %s was running when the node stopped; %s", stepName(), name, why)},
		}}); err != nil {
			return nil, bus.Errorf(bus.ReasonUnavailable, "the interrupted step %s could not be recorded (%v); the run is not resumed", cut.start.CallID, err)
		}
	}
	switch {
	case run.call.Conversation != "":
		return nil, bus.Errorf(ReasonInterrupted, "the node stopped while %s ran for conversation %s, which was told its call was interrupted; the run is not resumed, so that a new call by the model does not run it twice; %s%s", name, run.call.Conversation, doneText, cutText(cut, stepName))
	case run.call.Args == nil && run.call.ArgsBytes > 0:
		return nil, bus.Errorf(ReasonInterrupted, "the node stopped while %s ran, and its inputs (%d bytes) were too large to be logged, so the run cannot go on; %s%s; check what they did, then run it again", name, run.call.ArgsBytes, doneText, cutText(cut, stepName))
	case cut != nil && !again:
		return nil, bus.Errorf(ReasonInterrupted, "the node stopped while %s ran step %s, which may have written files or run a program already, so it is not run again and later steps did not run; %s; check what step %s did, then run the workflow again (or mark the step idempotent: true if running it twice does no harm)", name, stepName(), doneText, stepName())
	}
	return done, nil
}

func cutText(cut *openStep, stepName func() string) string {
	if cut == nil {
		return ""
	}
	return "; step " + stepName() + " was running"
}

// failRun records the workflow call's failure: the node stopped while it
// ran, and it does not go on.
func (e *Engine) failRun(ctx context.Context, id string, run *openRun, err error) {
	be := bus.AsError(err)
	e.log.Warn("workflow interrupted by the node's stop; not resumed", "project", id, "call", run.call.CallID, "reason", be.Message)
	if err := e.sendAll(ctx, id, entry{TypeToolFailed, ToolData{
		CallID: run.call.CallID, Conversation: run.call.Conversation, Tool: run.call.Tool,
		DurationMS: durationMS(time.Since(run.at)), Result: be.Type,
		Error: &tools.Error{Type: be.Type, Message: be.Message},
	}}); err != nil {
		e.log.Error("the interrupted workflow's failure could not be recorded; the next start decides again", "project", id, "call", run.call.CallID, "err", err)
	}
}

func durationMS(d time.Duration) float64 {
	ms := float64(d.Microseconds()) / 1000
	if ms <= 0 {
		return 0.001
	}
	return ms
}
