package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/oklog/ulid/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Defaults for Options' zero values.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxConcurrent = 4
	// DefaultOutputCap is the largest output a Result carries inline, in
	// bytes of JSON: the conversation store's artifact threshold, so an
	// output is offloaded at the same size wherever it goes.
	DefaultOutputCap = 64 << 10
	previewBytes     = 512
)

// Options configure a Runner. Sandbox and Catalog are required.
type Options struct {
	Sandbox *policy.Sandbox
	Catalog *Catalog
	// Observer hears every call; nil hears nothing.
	Observer Observer
	// Artifacts stores outputs over OutputCap; nil refuses them with
	// too_large.
	Artifacts ArtifactStore
	// MaxConcurrent bounds the calls of this runner (one project) running
	// at once; 0 means DefaultMaxConcurrent. A call waits for a slot until
	// its context ends, then fails with busy: waiting is what a caller
	// wants (an assistant issuing five reads at once), and the caller's
	// context says how long it is willing to wait.
	MaxConcurrent int
	// OutputCap is in bytes of JSON output; 0 means DefaultOutputCap.
	OutputCap int
	// DefaultTimeout is the timeout of a tool that names none; 0 means
	// DefaultTimeout.
	DefaultTimeout time.Duration
	// Checkpoints keep a file's content before a conversation's call
	// writes it (Result.Changes); nil keeps none.
	Checkpoints Checkpointer
}

// Runner runs a project's tool calls: the one path every call takes (see
// the package doc). It is safe for concurrent use.
//
// A tool that times out is told so through its context and the call
// returns timeout at once; the tool keeps its concurrency slot until its
// Func actually returns, so the limit bounds what really runs, even for a
// tool that ignores its context.
type Runner struct {
	sandbox   atomic.Pointer[policy.Sandbox]
	catalog   atomic.Pointer[Catalog]
	obs       Observer
	artifacts ArtifactStore
	slots     chan struct{}
	cap       int
	timeout   time.Duration
	// checkpoints is Options.Checkpoints.
	checkpoints Checkpointer
}

// NewRunner returns a runner over o.
func NewRunner(o Options) (*Runner, error) {
	if o.Sandbox == nil || o.Sandbox.Root == nil || o.Sandbox.Policy == nil {
		return nil, errors.New("tools: a runner needs a Sandbox with a Root and a Policy")
	}
	if o.Catalog == nil {
		return nil, errors.New("tools: a runner needs a Catalog")
	}
	r := &Runner{obs: o.Observer, artifacts: o.Artifacts, cap: o.OutputCap, timeout: o.DefaultTimeout, checkpoints: o.Checkpoints}
	r.sandbox.Store(o.Sandbox)
	if r.obs == nil {
		r.obs = nopObserver{}
	}
	n := o.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	r.slots = make(chan struct{}, n)
	if r.cap <= 0 {
		r.cap = DefaultOutputCap
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.catalog.Store(o.Catalog)
	return r, nil
}

// Catalog is the catalog calls are run against now.
func (r *Runner) Catalog() *Catalog { return r.catalog.Load() }

// SetCatalog swaps in a new catalog (after an asset reload); calls already
// running finish with the tool they started with.
func (r *Runner) SetCatalog(c *Catalog) { r.catalog.Store(c) }

// Sandbox is the sandbox calls run in now.
func (r *Runner) Sandbox() *policy.Sandbox { return r.sandbox.Load() }

// SetSandbox swaps in a new sandbox (after the project's policy changed);
// calls already running finish under the one they started with, each
// call using one sandbox from its authorization to its end.
func (r *Runner) SetSandbox(s *policy.Sandbox) { r.sandbox.Store(s) }

// Run runs one call. The Result is always filled in; the error is its
// Error (an *Error) when the call failed, nil when it succeeded.
func (r *Runner) Run(ctx context.Context, tc ToolCall) (Result, error) {
	return r.run(ctx, tc, "", true)
}

// Resume takes up call tc, a workflow's whose start the observer heard
// before the node stopped and whose outcome it never did: the workflow
// goes on after the steps of done (what its completed steps returned,
// in order) as Workflow.Resume does, its new steps children of tc.ID,
// and its outcome is observed as any call's. Its start is not heard
// again. tc is checked as at a first call — the tool still in the
// catalog, its args valid, the policy (as it is now) letting it run —
// and a refusal is the call's failure. tc.ID is required.
func (r *Runner) Resume(ctx context.Context, tc ToolCall, done []assets.StepOutput) (Result, error) {
	if tc.ID == "" {
		e := Errorf(ReasonInvalidArgs, "tool %s: a resumed call needs the id of the call it takes up", tc.Name)
		return Result{Error: e}, e
	}
	if done == nil {
		done = []assets.StepOutput{}
	}
	return r.runResumed(ctx, tc, "", true, done)
}

func (r *Runner) run(ctx context.Context, tc ToolCall, parent string, takeSlot bool) (Result, error) {
	return r.runResumed(ctx, tc, parent, takeSlot, nil)
}

// runResumed is run; a non-nil done makes it a Resume.
func (r *Runner) runResumed(ctx context.Context, tc ToolCall, parent string, takeSlot bool, done []assets.StepOutput) (Result, error) {
	start := time.Now()
	if tc.ID == "" {
		tc.ID = ulid.Make().String()
	}
	res := Result{CallID: tc.ID}
	started := Event{CallID: tc.ID, Parent: parent, Conversation: tc.Conversation, Tool: tc.Name, Args: tc.Args}
	p, e := r.prepare(tc)
	if e == nil && done != nil && !p.e.tool.resumable {
		e = Errorf(ReasonInvalidArgs, "tool %s cannot be resumed: only a workflow's run can", tc.Name)
	}
	// A call that changes nothing has its start recorded with its outcome,
	// in one commit, after it ran (see Observer); any other call's start
	// is committed before the tool runs: commit, then act, so the log
	// never lacks a call that had effects. A resumed call's start is in
	// the log already.
	quiet := done == nil && (e != nil || p.changesNothing())
	if !quiet && done == nil {
		if err := r.obs.ToolStarted(started); err != nil {
			e := Errorf(ReasonUnavailable, "tool %s not run: its start could not be recorded (%v); nothing was done, retry once the node can write again", tc.Name, err)
			res.Error = e
			return res, e
		}
	}
	var out ran
	ctx, changes, own := withChanges(ctx)
	if e == nil {
		out, e = r.execute(ctx, p, parent, takeSlot, done)
		res.Logs = out.logs
	}
	if own {
		// A call's files are its own and its steps' (a workflow's).
		res.Changes = changes.take()
	}
	ev := Event{CallID: tc.ID, Parent: parent, Conversation: tc.Conversation, Tool: tc.Name, Duration: time.Since(start)}
	if quiet {
		ev.Started = &started
	}
	if e != nil {
		ev.Error = e
		res.Error = e
		if tc.WithOutcome != nil {
			ev.With = tc.WithOutcome(res)
		}
		if err := r.obs.ToolFailed(ev); err != nil {
			e = Errorf(ReasonUnavailable, "tool %s failed (%s: %s) and that outcome could not be recorded (%v); what it did before failing may have happened", tc.Name, e.Type, e.Message, err)
		}
		res.Error = e
		return res, e
	}
	ev.Size, ev.Artifacts = len(out.data), out.arts
	if parent != "" {
		// A workflow's step: what it returned is the workflow's progress,
		// which a restart resumes from (Event.Output).
		ev.Output = out.data
	}
	res.OK, res.Data, res.Artifacts, res.Text = true, out.data, out.arts, out.text
	if tc.WithOutcome != nil {
		ev.With = tc.WithOutcome(res)
	}
	if err := r.obs.ToolCompleted(ev); err != nil {
		// The tool ran: its effects may be there although neither the
		// caller nor the log knows its result.
		e := Errorf(ReasonUnavailable, "tool %s ran, but its outcome could not be recorded (%v): its effects (files written, a command run) may have happened; check them before calling it again", tc.Name, err)
		res.OK, res.Data, res.Artifacts, res.Text = false, nil, nil, ""
		res.Error = e
		return res, e
	}
	return res, nil
}

type outcome struct {
	out any
	err error
}

// prepared is a call that passed its checks: its tool, args and the
// sandbox it runs in.
type prepared struct {
	tc      ToolCall
	e       *entry
	args    json.RawMessage
	sandbox *policy.Sandbox
}

// changesNothing: the tool declares that it reads and neither writes nor
// runs (its Safety, which counts what the tools it uses do), and calls no
// other tool, so its start can be recorded after it ran. A tool that
// declares nothing at all (a zero Safety) is taken to change things.
func (p *prepared) changesNothing() bool { return changesNothing(p.e.tool) }

func changesNothing(t Tool) bool {
	s := t.Safety
	return s.Reads && !s.Writes && !s.Runs && len(t.Uses) == 0
}

// ChangesNothing reports whether tool name is in the catalog and
// declares that it only reads and calls no other tool: running it twice
// does what running it once does, so a workflow's step of it that the
// node's stop interrupted may run again.
func (c *Catalog) ChangesNothing(name string) bool {
	e, ok := c.byName[name]
	return ok && changesNothing(e.tool)
}

// prepare checks tc before anything runs: the tool exists, its args
// match its schema, the policy lets it run. A refusal changes nothing.
func (r *Runner) prepare(tc ToolCall) (*prepared, *Error) {
	e, ok := r.catalog.Load().byName[tc.Name]
	if !ok {
		if renamed, old := assets.RenamedTool(tc.Name); old {
			return nil, Errorf(ReasonUnknownTool, "no tool %q: asset tools are named <kind>_<name> now; call %s", tc.Name, renamed)
		}
		return nil, Errorf(ReasonUnknownTool, "no tool %q in the project's catalog; list the tools the project offers", tc.Name)
	}
	args := tc.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := validate(e, args); err != nil {
		return nil, err
	}
	if err := checkMode(tc, e.tool.Safety); err != nil {
		return nil, err
	}
	sandbox := r.sandbox.Load()
	if tc.Within != nil {
		within, err := tc.Within(sandbox)
		if err != nil {
			return nil, toError(tc.Name, err)
		}
		sandbox = within
	}
	if tc.Approved {
		approved := *sandbox // the Host (the operator's rules) goes with it
		approved.Policy = sandbox.Policy.Approving(tc.Name)
		sandbox = &approved
	}
	if err := sandbox.Policy.Authorize(tc.Name, policy.OpRead, ""); err != nil {
		return nil, toError(tc.Name, err)
	}
	return &prepared{tc: tc, e: e, args: args, sandbox: sandbox}, nil
}

// ran is what a call that ran left: its data (or an artifact's
// stand-in), the artifact, its log lines, and its text (Result.Text).
type ran struct {
	data json.RawMessage
	arts []ArtifactRef
	logs []string
	text string
}

// execute runs a prepared call in a slot (unless it runs in its parent's)
// under its tool's timeout, and makes its output the result's data (or
// an artifact's stand-in).
func (r *Runner) execute(ctx context.Context, p *prepared, parent string, takeSlot bool, done []assets.StepOutput) (ran, *Error) {
	tc, e := p.tc, p.e
	if takeSlot {
		if err := ctx.Err(); err != nil {
			return ran{}, Errorf(ReasonCancelled, "tool %s not started: %v", tc.Name, err)
		}
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			return ran{}, Errorf(ReasonBusy, "tool %s not started: all %d slots of the project were busy until the call's context ended (%v); retry later or with a longer deadline", tc.Name, cap(r.slots), ctx.Err())
		}
	}
	timeout := e.tool.Timeout
	if timeout <= 0 {
		timeout = r.timeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call := &Call{ID: tc.ID, Parent: parent, Name: tc.Name, Args: p.args, Sandbox: p.sandbox, runner: r, conversation: tc.Conversation, mode: modeFor(tc.Mode), within: tc.Within, done: done, changes: changesOf(ctx)}
	var o outcome
	if e.tool.HonoursContext {
		o = r.runInline(tctx, e, call, takeSlot)
	} else {
		done := make(chan outcome, 1)
		go func() {
			if takeSlot {
				defer r.release()
			}
			done <- callFunc(tctx, e, call)
		}()
		select {
		case o = <-done:
		case <-tctx.Done():
			select { // a result that raced the deadline wins
			case o = <-done:
			default:
				return ran{logs: call.takeLogs()}, ctxError(ctx, tc.Name, timeout)
			}
		}
	}
	logs := call.takeLogs()
	if o.err != nil {
		if tctx.Err() != nil && errors.Is(o.err, tctx.Err()) {
			return ran{logs: logs}, ctxError(ctx, tc.Name, timeout)
		}
		return ran{logs: logs}, toError(tc.Name, o.err)
	}
	data, err := json.Marshal(o.out)
	if err != nil {
		return ran{logs: logs}, Errorf(ReasonToolFailed, "tool %s: its output is not JSON: %v", tc.Name, err)
	}
	if len(data) <= r.cap {
		out := ran{data: data, logs: logs}
		if t, ok := o.out.(Texter); ok {
			out.text = t.OutputText()
		}
		return out, nil
	}
	if r.artifacts == nil {
		return ran{logs: logs}, Errorf("too_large", "tool %s: output of %d bytes is over the cap of %d and no artifact store is configured; narrow the call", tc.Name, len(data), r.cap)
	}
	ref, err := r.artifacts.Put(data, "application/json")
	if err != nil {
		// The node's own store failed (a full disk, typically): the call
		// may succeed later, so it is unavailable, not a bug's internal.
		return ran{logs: logs}, Errorf(ReasonUnavailable, "tool %s ran, but its %d-byte output could not be stored as an artifact (%v); free space in the node's data dir and retry", tc.Name, len(data), err)
	}
	stand, _ := json.Marshal(artifactStandIn{Artifact: ref.ID, Size: ref.Size, Preview: preview(data)})
	return ran{data: stand, arts: []ArtifactRef{ref}, logs: logs}, nil
}

// runInline runs a tool that honours its context on the calling
// goroutine: its result is what the watchdog path would return, since that
// path lets a result that raced the deadline win too.
func (r *Runner) runInline(ctx context.Context, e *entry, call *Call, takeSlot bool) outcome {
	if takeSlot {
		defer r.release()
	}
	return callFunc(ctx, e, call)
}

func (r *Runner) release() { <-r.slots }

// callFunc calls the tool's Func, turning a panic into an internal error.
func callFunc(ctx context.Context, e *entry, call *Call) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{err: Errorf("internal", "tool %s panicked: %v", call.Name, p)}
		}
	}()
	out, err := e.tool.Func(ctx, call)
	return outcome{out, err}
}

// ctxError is the error of a call whose context ended: the caller's
// (cancelled) or the tool's own deadline (timeout).
func ctxError(parent context.Context, tool string, timeout time.Duration) *Error {
	if err := parent.Err(); err != nil {
		return Errorf(ReasonCancelled, "tool %s was cancelled by its caller: %v", tool, err)
	}
	return Errorf(ReasonTimeout, "tool %s ran past its timeout of %s and was cancelled; narrow the call (a smaller path, range or pattern)", tool, timeout)
}

func validate(e *entry, args json.RawMessage) *Error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &Error{Type: ReasonInvalidArgs, Message: fmt.Sprintf("tool %s: args are not JSON: %v", e.tool.Name, err)}
	}
	if err := e.input.Validate(v); err != nil {
		leaves := validationLeaves(err)
		return &Error{Type: ReasonInvalidArgs,
			Message: fmt.Sprintf("tool %s: args do not match its input schema: %s", e.tool.Name, leaves[0]),
			Details: map[string]any{"schema_errors": leaves, "input_schema": e.tool.InputSchema}}
	}
	return nil
}

func preview(data []byte) string {
	if len(data) <= previewBytes {
		return string(data)
	}
	p := data[:previewBytes]
	for len(p) > 0 && !utf8.Valid(p) {
		p = p[:len(p)-1]
	}
	return string(p)
}
