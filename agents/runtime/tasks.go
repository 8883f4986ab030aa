package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// Task runs a RunInstruction directive's instruction: work that may take
// time or touch the world (a tool call, an HTTP request), outside the
// agent's pure decision. It runs on a goroutine of its own; ctx ends when
// the agent stops or the runtime closes. Its result (or error) returns to
// the agent as a jido.agent.instruction.result signal, decided by the
// directive's result action. A task may run again after a crash, so it
// should tolerate repeats.
type Task func(ctx context.Context, in agents.Instruction) (json.RawMessage, error)

// instructionResult is the data of a jido.agent.instruction.result signal.
type instructionResult struct {
	Instruction  agents.Instruction `json:"instruction"`
	ResultAction string             `json:"result_action,omitempty"`
	Result       json.RawMessage    `json:"result,omitempty"`
	Error        *bus.Error         `json:"error,omitempty"`
}

// execRunInstruction starts the task and waits until it holds a slot
// (Config.MaxTasks), so that an agent whose tasks wait decides no more
// work than its queue holds; the wait ends early when the agent stops or
// the runtime shuts down, and the task, still awaited in the log, runs
// after the next start.
func execRunInstruction(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	<-x.s.startTask(d.(agents.RunInstruction), x.Input, x.Index)
	return ExecResult{Kind: ExecAsync}, nil
}

// startTask runs the instruction's task on its own goroutine once a slot
// is free, and delivers the result signal when it ends. The channel it
// returns is closed when the task started, or gave up waiting because
// the agent stopped or the runtime closed.
func (s *server) startTask(run agents.RunInstruction, input bus.Signal, index int) <-chan struct{} {
	id := taskResultID(&input, s.id, index)
	ctx, cancel := context.WithCancel(s.rt.ctx)
	s.mu.Lock()
	if old := s.tasks[id]; old != nil {
		old()
	}
	if s.tasks == nil {
		s.tasks = make(map[string]context.CancelFunc)
	}
	s.tasks[id] = cancel
	s.mu.Unlock()
	forget := func() {
		cancel()
		s.mu.Lock()
		s.forgetTask(id)
		s.mu.Unlock()
	}
	return s.rt.tasks.admit(ctx, func() {
		started := s.rt.workers.Go(func() {
			defer cancel()
			res := s.runTask(ctx, run)
			s.rt.tasks.release()
			s.mu.Lock()
			s.forgetTask(id)
			s.mu.Unlock()
			if ctx.Err() != nil {
				return // the agent stopped or the runtime closed; recovery runs it again
			}
			s.deliverTaskResult(id, input, res)
		})
		if !started {
			// The runtime has shut down: the task is still awaited in
			// the log, and the next start runs it.
			s.rt.tasks.release()
			forget()
		}
	})
}

// runTask runs the instruction's registered task.
func (s *server) runTask(ctx context.Context, run agents.RunInstruction) instructionResult {
	res := instructionResult{Instruction: run.Instruction, ResultAction: run.ResultAction}
	task := s.rt.cfg.Tasks[run.Instruction.Action]
	if task == nil {
		res.Error = bus.Errorf(bus.ReasonNotFound, "no task %q is registered with the runtime", run.Instruction.Action)
		return res
	}
	out, err := callTask(ctx, task, run.Instruction)
	if err != nil {
		res.Error = bus.AsError(err)
	} else {
		res.Result = out
	}
	return res
}

// deliverTaskResult hands the agent the result of the task that input's
// decision started, as signal id.
func (s *server) deliverTaskResult(id string, input bus.Signal, res instructionResult) {
	sig, err := agents.NewSignal(TypeInstructionResult, res)
	if err != nil {
		s.rt.log.Error("encode task result", "agent", s.id, "task", res.Instruction.Action, "err", err)
		return
	}
	sig.SetID(id)
	sig.SetSource(agents.SourceOf(s.id))
	sig.SetTime(s.rt.now())
	if tp, ok := input.Extensions()[bus.ExtTraceParent].(string); ok {
		// The result belongs to the input's trace, as what it emits does.
		sig.SetExtension(bus.ExtTraceParent, tp)
	}
	// Admitted past a full queue, as an executor's result is: it answers
	// work the agent committed, and a result refused and retried while the
	// agent stays busy came late and out of order.
	if err := s.rt.deliver(s.id, envelope{sig: sig, internal: true}); err != nil {
		// The agent stopped or the runtime is stopping: the task is still
		// awaited in the log and runs again after the restart.
		s.rt.log.Debug("task result not delivered", "agent", s.id, "task", res.Instruction.Action, "err", err)
	}
}

// callTask runs a task, turning a panic into its error.
func callTask(ctx context.Context, task Task, in agents.Instruction) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task %s panicked: %v", in.Action, p)
		}
	}()
	return task(ctx, in)
}

// forgetTask removes a task that ended; s.mu is held. The map goes when
// it is empty, as the other per-agent buffers do (see idleMemory).
func (s *server) forgetTask(id string) {
	delete(s.tasks, id)
	if len(s.tasks) == 0 {
		s.tasks = nil
	}
}
