package runtime

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
)

// Timers are durable intentions, not just armed clocks. When a decision
// with a Schedule, ScheduleCancel, Cron, CronCancel or RunInstruction is
// committed, the inbox loop records what is now awaited (committed);
// executors arm the clocks. A schedule stays awaited until the signal it
// promised is committed or it is cancelled, a task until its signal is
// committed, a cron job until it is cancelled. The set is part of every
// snapshot and rebuilt from the log on recovery, so a timer of an agent
// whose process was killed still fires, late rather than never.

// awaited is a signal the agent was promised and has not received yet.
type awaited struct {
	Kind   string     `json:"kind"` // "schedule" or "task"
	Due    time.Time  `json:"due,omitzero"`
	Signal bus.Signal `json:"signal,omitzero"` // schedule: the signal to deliver
	// Task: the RunInstruction to run again and the signal that produced it.
	Run   *agents.RunInstruction `json:"run,omitempty"`
	Input *bus.Signal            `json:"input,omitempty"`
	Index int                    `json:"index,omitempty"`
}

// cronJob is a standing cron job.
type cronJob struct {
	JobID  string      `json:"job_id"`
	Expr   string      `json:"expr"`
	TZ     string      `json:"tz,omitempty"`
	Signal *bus.Signal `json:"signal,omitempty"`
}

// timerState is the durable part, as snapshots store it.
type timerState struct {
	Awaiting map[string]awaited `json:"awaiting,omitempty"`
	Crons    map[string]cronJob `json:"crons,omitempty"`
}

type timers struct {
	s     *server
	mu    sync.Mutex
	state timerState
	armed map[string]*time.Timer
}

func newTimers(s *server) *timers {
	return &timers{s: s, state: timerState{Awaiting: map[string]awaited{}, Crons: map[string]cronJob{}}, armed: map[string]*time.Timer{}}
}

// taskResultID is the id of the result signal of the task that directive
// index of the decision on input started. It derives from input's source
// and id (agents.OriginKey), as emitted ids do: ids are unique per source,
// so inputs with one id from two sources start tasks whose results differ,
// and a task run again after a crash answers under the same id.
func taskResultID(input *bus.Signal, agentID string, index int) string {
	return agents.OriginKey(agents.Origin{ID: input.ID(), Source: input.Source()}, agentID) + "." + strconv.Itoa(index) + ".result"
}

// committed updates the intentions after the decision on signal sigID was
// committed at time at with directives.
func (t *timers) committed(input *bus.Signal, directives []agents.Directive, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.state.Awaiting, input.ID())
	t.record(input, directives, at)
}

// record notes the intentions of one committed decision; t.mu is held.
func (t *timers) record(input *bus.Signal, directives []agents.Directive, at time.Time) {
	for i, d := range directives {
		switch d := d.(type) {
		case agents.Schedule:
			t.state.Awaiting[d.Signal.ID()] = awaited{Kind: "schedule", Due: at.Add(d.Delay), Signal: d.Signal}
		case agents.ScheduleCancel:
			// Withdrawn at the commit, so that a clock armed before it
			// cannot deliver after it, and recovery does not arm it again.
			if a, ok := t.state.Awaiting[d.SignalID]; ok && a.Kind == "schedule" {
				delete(t.state.Awaiting, d.SignalID)
			}
			if tm := t.armed["schedule:"+d.SignalID]; tm != nil {
				tm.Stop()
				delete(t.armed, "schedule:"+d.SignalID)
			}
		case agents.Cron:
			t.state.Crons[d.JobID] = cronJob{JobID: d.JobID, Expr: d.Expr, TZ: d.TZ, Signal: d.Signal}
		case agents.CronCancel:
			delete(t.state.Crons, d.JobID)
		case agents.RunInstruction:
			run, in := d, input.Clone()
			t.state.Awaiting[taskResultID(input, t.s.id, i)] = awaited{Kind: "task", Run: &run, Input: &in, Index: i}
		}
	}
}

// snapshot returns a copy of the durable state.
func (t *timers) snapshot() timerState {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := timerState{Awaiting: make(map[string]awaited, len(t.state.Awaiting)), Crons: make(map[string]cronJob, len(t.state.Crons))}
	for k, v := range t.state.Awaiting {
		out.Awaiting[k] = v
	}
	for k, v := range t.state.Crons {
		out.Crons[k] = v
	}
	return out
}

// armSchedule starts the clock of the scheduled signal id; a due time in
// the past fires at once.
func (t *timers) armSchedule(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.state.Awaiting[id]
	if !ok || a.Kind != "schedule" {
		return
	}
	t.armLocked("schedule:"+id, a.Due, func() { t.fireSchedule(id) })
}

func (t *timers) armLocked(key string, due time.Time, fire func()) {
	if old := t.armed[key]; old != nil {
		old.Stop()
	}
	d := max(due.Sub(t.s.rt.now()), 0)
	t.armed[key] = time.AfterFunc(d, fire)
}

func (t *timers) fireSchedule(id string) {
	t.mu.Lock()
	a, ok := t.state.Awaiting[id]
	delete(t.armed, "schedule:"+id)
	t.mu.Unlock()
	if ok {
		t.deliver("schedule:"+id, a.Signal)
	}
}

// deliver hands a timer's signal to the agent. A full queue does not lose
// it: the delivery is tried again a second later, for as long as the
// intention stands.
func (t *timers) deliver(key string, sig bus.Signal) {
	err := t.s.rt.Deliver(t.s.id, sig, nil)
	if err == nil || bus.ErrorType(err) != bus.ReasonQueueOverflow {
		if err != nil {
			t.s.rt.log.Debug("timer signal not delivered", "agent", t.s.id, "signal", sig.ID(), "err", err)
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s.rt.ctx.Err() == nil {
		t.armed[key] = time.AfterFunc(time.Second, func() { t.deliver(key, sig) })
	}
}

// armCron starts (or restarts) the clock of cron job jobID.
func (t *timers) armCron(jobID string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	job, ok := t.state.Crons[jobID]
	if !ok {
		return nil
	}
	next, err := job.next(t.s.rt.now())
	if err != nil {
		delete(t.state.Crons, jobID)
		return err
	}
	t.armLocked("cron:"+jobID, next, func() { t.fireCron(jobID, next) })
	return nil
}

func (job cronJob) next(after time.Time) (time.Time, error) {
	sched, err := cron.ParseStandard(job.Expr)
	if err != nil {
		return time.Time{}, bus.Errorf(bus.ReasonInvalidRequest, "cron job %s: expression %q: %v", job.JobID, job.Expr, err)
	}
	loc := time.UTC
	if job.TZ != "" {
		if loc, err = time.LoadLocation(job.TZ); err != nil {
			return time.Time{}, bus.Errorf(bus.ReasonInvalidRequest, "cron job %s: time zone %q: %v", job.JobID, job.TZ, err)
		}
	}
	return sched.Next(after.In(loc)), nil
}

func (t *timers) fireCron(jobID string, at time.Time) {
	t.mu.Lock()
	job, ok := t.state.Crons[jobID]
	t.mu.Unlock()
	if !ok {
		return
	}
	sig, err := job.tick(t.s.id, at)
	if err != nil {
		t.s.rt.log.Error("cron tick", "agent", t.s.id, "job", jobID, "err", err)
		return
	}
	t.deliver("cron-tick:"+sig.ID(), sig)
	if err := t.armCron(jobID); err != nil {
		t.s.rt.log.Error("re-arm cron job", "agent", t.s.id, "job", jobID, "err", err)
	}
}

// tick builds the signal of one firing. Its id is the job's and the firing
// time's, so a firing repeated after a restart is recognised by the log.
func (job cronJob) tick(agentID string, at time.Time) (bus.Signal, error) {
	var sig bus.Signal
	if job.Signal != nil {
		sig = job.Signal.Clone()
	} else {
		var err error
		sig, err = agents.NewSignal(TypeCronTick, map[string]any{"job_id": job.JobID, "scheduled_at": at.UTC()})
		if err != nil {
			return sig, err
		}
		sig.SetSource(agents.SourceOf(agentID))
	}
	sig.SetID(fmt.Sprintf("cron:%s:%s:%d", agentID, job.JobID, at.UnixMilli()))
	sig.SetTime(at.UTC())
	return sig, nil
}

// cancelCron stops cron job jobID's clock.
func (t *timers) cancelCron(jobID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tm := t.armed["cron:"+jobID]; tm != nil {
		tm.Stop()
		delete(t.armed, "cron:"+jobID)
	}
}

// stopAll stops every clock (the intentions stay, for a later recovery).
func (t *timers) stopAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, tm := range t.armed {
		tm.Stop()
		delete(t.armed, k)
	}
}

func execSchedule(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	x.s.timers.armSchedule(d.(agents.Schedule).Signal.ID())
	return ExecResult{Kind: ExecAsync}, nil
}

// execScheduleCancel has nothing left to do: the schedule was withdrawn
// when the decision was committed (timers.record).
func execScheduleCancel(context.Context, agents.Directive, *ExecContext) (ExecResult, error) {
	return ExecResult{}, nil
}

func execCron(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	if err := x.s.timers.armCron(d.(agents.Cron).JobID); err != nil {
		return ExecResult{}, err
	}
	return ExecResult{Kind: ExecAsync}, nil
}

func execCronCancel(_ context.Context, d agents.Directive, x *ExecContext) (ExecResult, error) {
	x.s.timers.cancelCron(d.(agents.CronCancel).JobID)
	return ExecResult{}, nil
}

// nextDue returns when the first of the agent's timers is due (zero when
// it has none), for a passive agent's wake-up.
func (t *timers) nextDue(now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first time.Time
	consider := func(at time.Time) {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	for _, a := range t.state.Awaiting {
		if a.Kind == "schedule" {
			consider(a.Due)
		} else {
			consider(now) // a task still to run
		}
	}
	for _, job := range t.state.Crons {
		if next, err := job.next(now); err == nil {
			consider(next)
		}
	}
	return first
}
