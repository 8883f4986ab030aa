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

func execRunInstruction(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	x.s.startTask(d.(agents.RunInstruction), x.Input, x.Index)
	return ExecResult{Kind: ExecAsync}, nil
}

// startTask runs the instruction's task on its own goroutine and delivers
// the result signal when it ends.
func (s *server) startTask(run agents.RunInstruction, input bus.Signal, index int) {
	id := taskResultID(&input, s.id, index)
	ctx, cancel := context.WithCancel(s.rt.ctx)
	s.mu.Lock()
	if old := s.tasks[id]; old != nil {
		old()
	}
	s.tasks[id] = cancel
	s.mu.Unlock()
	started := s.rt.workers.Go(func() {
		defer cancel()
		res := instructionResult{Instruction: run.Instruction, ResultAction: run.ResultAction}
		task := s.rt.cfg.Tasks[run.Instruction.Action]
		if task == nil {
			res.Error = bus.Errorf(bus.ReasonNotFound, "no task %q is registered with the runtime", run.Instruction.Action)
		} else {
			out, err := callTask(ctx, task, run.Instruction)
			if err != nil {
				res.Error = bus.AsError(err)
			} else {
				res.Result = out
			}
		}
		s.mu.Lock()
		delete(s.tasks, id)
		s.mu.Unlock()
		if ctx.Err() != nil {
			return // the agent stopped or the runtime closed; recovery runs it again
		}
		sig, err := agents.NewSignal(TypeInstructionResult, res)
		if err != nil {
			s.rt.log.Error("encode task result", "agent", s.id, "task", run.Instruction.Action, "err", err)
			return
		}
		sig.SetID(id)
		sig.SetSource(agents.SourceOf(s.id))
		sig.SetTime(s.rt.now())
		if tp, ok := input.Extensions()[bus.ExtTraceParent].(string); ok {
			// The result belongs to the input's trace, as what it emits does.
			sig.SetExtension(bus.ExtTraceParent, tp)
		}
		s.timers.deliver("task:"+id, sig)
	})
	if !started {
		// The runtime has shut down: the task is still awaited in the
		// log, and the next start runs it.
		cancel()
		s.mu.Lock()
		delete(s.tasks, id)
		s.mu.Unlock()
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
