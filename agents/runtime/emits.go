package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/dispatch"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Reading what agents emitted from the log. An emit is an Emit directive
// of a committed decision (a jido.agent.cmd record); the log holds its
// signal as it was published (a signal without time of its own takes the
// decision's, as the runtime publishes it), and the outcome the runtime
// recorded once it ran. ReadEmits reports the emits that went, or go, on
// the emitting agent's own subjects <prefix>.emit.<agent-id>.<type> —
// what a subscriber to <prefix>.emit.<agent-id>.> receives, no more:
//
//   - an emit whose recorded outcome is ok is "published": NATS took it;
//   - an emit with no outcome recorded yet is "unconfirmed": it is being
//     published, or was just before a crash and will be again by
//     recovery (directives run at least once), with the same id and
//     position;
//   - an emit whose outcome says it was not published — it failed, or
//     was dropped when the agent stopped first — is not reported;
//   - an emit sent elsewhere (a webhook, the logger, a subject that is
//     not the agent's own emit subject) is not reported either.
//
// So a reader that subscribes first and then reads misses nothing: an
// emit published before its subscription began was committed before
// that, so the read has it. What it may see that a live subscriber never
// does is an unconfirmed emit whose publication then fails (NATS refused
// it: the node's connection closed, the message was over its max
// payload); a later read no longer reports it.

// EmitLog is the log ReadEmits reads; *eventlog.Log is one.
type EmitLog interface {
	ReadStream(stream string, opts eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error]
	ReadAll(opts eventlog.ReadOptions) iter.Seq2[eventlog.Entry, error]
	LoadSnapshot(stream string) (eventlog.Snapshot, error)
}

var _ EmitLog = (*eventlog.Log)(nil)

// EmitsRequest asks for one page of emits after a position: of one agent's
// stream (Stream, e.g. agent/c1), or of every agent in log order (no
// Stream; After then counts global sequences). Types, a pattern, keeps
// the emits whose signal type matches it. Limit bounds the page;
// zero means DefaultEmitsLimit.
type EmitsRequest struct {
	Stream string     `json:"stream,omitempty"`
	After  EmitCursor `json:"after"`
	Types  string     `json:"types,omitempty"`
	Limit  int        `json:"limit,omitempty"`
}

// DefaultEmitsLimit is the page size of a request that names no limit.
const DefaultEmitsLimit = 1000

// Statuses of a reported emit (Emitted.Status).
const (
	EmitPublished   = "published"   // its outcome is recorded: NATS took it
	EmitUnconfirmed = "unconfirmed" // no outcome recorded yet
)

// Emitted is one emit as ReadEmits reports it.
type Emitted struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`        // stream sequence of its decision (Jido-Seq)
	GlobalSeq uint64 `json:"global_seq"` // global sequence of its decision (Jido-Global-Seq)
	Index     int    `json:"index"`      // its index in the decision (Jido-Emit-Index)
	// Position is the emit's cursor in the read's terms: After for the
	// read that continues right after it.
	Position EmitCursor `json:"position"`
	Subject  string     `json:"subject"` // where it is published
	Status   string     `json:"status"`
	// Event is the CloudEvent, structured JSON, as it is published.
	Event json.RawMessage `json:"event"`
}

// EmitsPage is one page of emits, in log order.
type EmitsPage struct {
	Emits []Emitted `json:"emits"`
	// Damaged lists entries that could not be read (skipped): emits may
	// be missing there.
	Damaged []*eventlog.CorruptError `json:"damaged,omitempty"`
	// Next is the After of the following read: past the last emit
	// reported, or past everything read when the page did not fill.
	Next EmitCursor `json:"next"`
	// More is true when the page stopped at its limit or size, not at the
	// end of what is committed now.
	More bool `json:"more"`
}

// emitsPageReserve is what a page of maxBytes keeps for what it holds
// besides its emits (the reply's envelope, next, damaged entries): a
// quarter, at most emitsPageReserveMax.
const emitsPageReserveMax = 8 << 10

func emitsPageBudget(maxBytes int) int {
	return maxBytes - min(maxBytes/4, emitsPageReserveMax)
}

// ReadEmits reads one page of emits from l: at most req.Limit, and about
// maxBytes of them (a page holds at least one). subjects names the
// subjects they are published on (<prefix>.emit.<agent-id>.<type>).
//
// Errors: a negative limit (invalid_request), an invalid pattern or
// stream name (their *bus.Error types), a stream that does not exist
// (eventlog.ErrNotFound), and a position of a stream whose next entries
// were truncated away (*eventlog.GoneError: the emits there are lost).
func ReadEmits(ctx context.Context, l EmitLog, subjects bus.Subjects, req EmitsRequest, maxBytes int) (EmitsPage, error) {
	r := &emitReader{l: l, subjects: subjects, req: req, maxBytes: emitsPageBudget(maxBytes),
		codec: agents.NewDirectiveCodec(), agentsOf: map[string]*emitter{}, pending: map[pendingKey]int{}}
	switch {
	case req.Limit < 0:
		return EmitsPage{}, bus.Errorf(bus.ReasonInvalidRequest, "limit %d: want 0 (a page of %d) or more", req.Limit, DefaultEmitsLimit)
	case req.Limit == 0:
		r.req.Limit = DefaultEmitsLimit
	}
	if req.Types != "" {
		p, err := bus.CompilePattern(req.Types)
		if err != nil {
			return EmitsPage{}, err
		}
		r.types = &p
	}
	if req.Stream != "" {
		if err := eventlog.ValidateStream(req.Stream); err != nil {
			return EmitsPage{}, err
		}
	}
	return r.read(ctx)
}

// emitReader reads one page. It collects emits until the page is full,
// then reads on only as far as it takes to learn the outcomes of those
// it collected (most are recorded an entry or two later).
type emitReader struct {
	l        EmitLog
	subjects bus.Subjects
	req      EmitsRequest
	maxBytes int
	codec    *agents.DirectiveCodec
	types    *bus.Pattern

	page     EmitsPage
	size     int
	full     bool
	excluded map[int]bool // emits of the page whose outcome says they were not published
	// pending maps the emits of the page whose outcome is not known yet
	// to their place in page.Emits.
	pending  map[pendingKey]int
	agentsOf map[string]*emitter // by stream
}

// pendingKey names a directive by stream, decision version and index, as
// its outcome does; versions count within an incarnation, so a stream's
// keys are dropped when its incarnation ends.
type pendingKey struct {
	stream  string
	version uint64
	index   int
}

// emitter is what the subject of an agent's emits depends on.
type emitter struct {
	id       string
	dispatch *dispatch.Config // the agent's default_dispatch
}

func (r *emitReader) read(ctx context.Context) (EmitsPage, error) {
	r.page = EmitsPage{Emits: []Emitted{}, Next: r.req.After}
	from := r.req.After.Seq
	if from > 0 && r.req.After.whole() {
		from++ // after the whole decision: the next entry
	}
	// From 0 is the first entry retained: a reader from the start gets
	// what there is.
	opts := eventlog.ReadOptions{From: from, Types: "jido.agent.**"}
	entries := r.l.ReadAll(opts)
	if r.req.Stream != "" {
		entries = r.l.ReadStream(r.req.Stream, opts)
	}
	for e, err := range entries {
		if ce, ok := errors.AsType[*eventlog.CorruptError](err); ok {
			if !r.full {
				r.page.Damaged = append(r.page.Damaged, ce)
				r.page.Next = EmitCursorAt(r.position(ce.Seq, ce.GlobalSeq))
			}
			continue
		}
		if err != nil {
			return EmitsPage{}, err
		}
		if err := ctx.Err(); err != nil {
			return EmitsPage{}, err
		}
		if e.Event.Source() != recordSource {
			continue // not the runtime's record
		}
		if err := r.entry(&e); err != nil {
			return EmitsPage{}, err
		}
		if r.full && len(r.pending) == 0 {
			break
		}
	}
	emits := r.page.Emits[:0]
	for i, em := range r.page.Emits {
		if !r.excluded[i] {
			emits = append(emits, em)
		}
	}
	r.page.Emits = emits
	return r.page, nil
}

// position is an entry's position in the read's terms.
func (r *emitReader) position(seq, gseq uint64) uint64 {
	if r.req.Stream == "" {
		return gseq
	}
	return seq
}

func (r *emitReader) entry(e *eventlog.Entry) error {
	switch e.Event.Type() {
	case TypeStarted:
		// A new incarnation: the last one's outcomes are all in by now
		// (a stop records what it dropped), and versions count anew.
		r.endIncarnation(e.Stream)
		var rec startedRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err == nil {
			r.agentsOf[e.Stream] = &emitter{id: rec.ID, dispatch: rec.Options.DefaultDispatch}
		}
	case TypeStopped:
		r.endIncarnation(e.Stream)
	case TypeEffects:
		var rec effectsRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
			return r.damaged(e, fmt.Sprintf("effects record: %v", err))
		}
		r.settle(e.Stream, rec.Results)
	case TypeCmd:
		var rec cmdRecord
		if err := json.Unmarshal(e.Event.Data(), &rec); err != nil {
			return r.damaged(e, fmt.Sprintf("cmd record: %v", err))
		}
		// The outcomes it carries are of earlier decisions.
		r.settle(e.Stream, rec.Effects)
		if !r.full {
			return r.collect(e, &rec)
		}
	}
	return nil
}

// damaged notes an entry that is not what its type says, while the page
// is being filled: its emits, if any, are not reported.
func (r *emitReader) damaged(e *eventlog.Entry, reason string) error {
	if !r.full {
		r.page.Damaged = append(r.page.Damaged, &eventlog.CorruptError{Stream: e.Stream, Seq: e.Seq, GlobalSeq: e.GlobalSeq, Reason: reason})
		r.page.Next = EmitCursorAt(r.position(e.Seq, e.GlobalSeq))
	}
	return nil
}

// damagedDirective notes an emit of the decision e that cannot be read;
// the decision's other emits are.
func (r *emitReader) damagedDirective(e *eventlog.Entry, index int, err error) {
	r.page.Damaged = append(r.page.Damaged, &eventlog.CorruptError{Stream: e.Stream, Seq: e.Seq, GlobalSeq: e.GlobalSeq, Reason: fmt.Sprintf("emit %d: %v", index, err)})
}

func (r *emitReader) settle(stream string, results []effectResult) {
	for _, res := range results {
		k := pendingKey{stream, res.Version, res.Index}
		i, ok := r.pending[k]
		if !ok {
			continue
		}
		delete(r.pending, k)
		if res.Outcome == OutcomeOK {
			r.page.Emits[i].Status = EmitPublished
		} else {
			if r.excluded == nil {
				r.excluded = map[int]bool{}
			}
			r.excluded[i] = true
		}
	}
}

// endIncarnation leaves the emits of stream whose outcome is still not
// known unconfirmed: no outcome of theirs can follow.
func (r *emitReader) endIncarnation(stream string) {
	for k := range r.pending {
		if k.stream == stream {
			delete(r.pending, k)
		}
	}
}

// collect adds the emits of the decision e to the page, until it is full.
func (r *emitReader) collect(e *eventlog.Entry, rec *cmdRecord) error {
	pos := r.position(e.Seq, e.GlobalSeq)
	var directives []json.RawMessage
	if len(rec.Directives) > 0 {
		if err := json.Unmarshal(rec.Directives, &directives); err != nil {
			return r.damaged(e, fmt.Sprintf("directives: %v", err))
		}
	}
	at := decidedAt(e)
	for i, raw := range directives {
		if r.req.After.covers(pos, i) || !isEmit(raw) {
			continue
		}
		d, err := r.codec.Decode(raw)
		if err != nil {
			r.damagedDirective(e, i, err)
			continue
		}
		em := d.(agents.Emit)
		subject, ok, err := r.subject(e, em)
		if err != nil {
			return err
		}
		if !ok || (r.types != nil && !r.types.Match(em.Signal.Type())) {
			continue
		}
		sig := withTime(em.Signal, at, func() time.Time { return at })
		body, err := json.Marshal(sig)
		if err != nil {
			r.damagedDirective(e, i, err)
			continue
		}
		item := Emitted{
			Stream: e.Stream, Seq: e.Seq, GlobalSeq: e.GlobalSeq, Index: i, Position: EmitCursor{Seq: pos, Index: i},
			Subject: subject, Status: EmitUnconfirmed, Event: body,
		}
		size := emittedSize(&item)
		if len(r.page.Emits) == r.req.Limit || (r.size+size > r.maxBytes && len(r.page.Emits) > 0) {
			r.full, r.page.More = true, true
			return nil
		}
		r.size += size
		r.pending[pendingKey{e.Stream, rec.Version, i}] = len(r.page.Emits)
		r.page.Next = item.Position
		r.page.Emits = append(r.page.Emits, item)
	}
	r.page.Next = EmitCursorAt(pos)
	return nil
}

// emittedSize is about the bytes item takes in a reply: its JSON, and a
// status as long as the longest.
func emittedSize(item *Emitted) int {
	b, _ := json.Marshal(item) // its members always encode
	return len(b) + len(EmitUnconfirmed) + 1
}

// isEmit reports whether a directive's log form is an Emit's, without
// decoding the rest of it.
func isEmit(raw json.RawMessage) bool {
	var head struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(raw, &head) == nil && head.Kind == agents.KindEmit
}

// subject returns the subject the emit em of decision e is published on,
// and false when that is not its agent's own emit subject.
func (r *emitReader) subject(e *eventlog.Entry, em agents.Emit) (string, bool, error) {
	a, err := r.emitterOf(e)
	if err != nil {
		return "", false, err
	}
	cfg := dispatch.Config{} // the runtime's default: NATS, the emit subject
	switch {
	case em.Dispatch != nil:
		if cfg, err = dispatchConfig(*em.Dispatch); err != nil {
			return "", false, nil // the runtime refuses to dispatch it: it fails
		}
	case a.dispatch != nil:
		cfg = *a.dispatch
	}
	subject, ok := r.ownSubject(cfg, a.id, em.Signal.Type())
	return subject, ok, nil
}

// ownSubject returns the subject cfg publishes a signal of type typ of
// agent id on, when it is one of the agent's own emit subjects (the
// first such target of a list).
func (r *emitReader) ownSubject(cfg dispatch.Config, id, typ string) (string, bool) {
	if cfg.Targets != nil {
		for _, t := range cfg.Targets {
			if s, ok := r.ownSubject(t, id, typ); ok {
				return s, true
			}
		}
		return "", false
	}
	if cfg.Kind != "" && cfg.Kind != dispatch.KindNATS {
		return "", false
	}
	subject := cfg.Subject
	if subject == "" {
		subject = r.subjects.Emit(id, typ)
	}
	addr, err := r.subjects.Parse(subject)
	if err != nil || addr.Kind != bus.KindEmit || addr.AgentID != id {
		return "", false
	}
	return subject, true
}

// emitterOf returns who made the decision e: the agent its incarnation's
// started record names, found before e in its stream; when truncation
// removed that record, the one the agent's last snapshot keeps; else the
// agent the stream is named after.
func (r *emitReader) emitterOf(e *eventlog.Entry) (*emitter, error) {
	if a := r.agentsOf[e.Stream]; a != nil {
		return a, nil
	}
	a := &emitter{}
	for s, err := range r.l.ReadStream(e.Stream, eventlog.ReadOptions{From: e.Seq, Backward: true, Types: TypeStarted, Limit: 1}) {
		if _, corrupt := errors.AsType[*eventlog.CorruptError](err); corrupt {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the agent of %s: %w", e.Stream, err)
		}
		var rec startedRecord
		if json.Unmarshal(s.Event.Data(), &rec) == nil {
			a.id, a.dispatch = rec.ID, rec.Options.DefaultDispatch
		}
	}
	if a.id == "" {
		if snap, err := r.l.LoadSnapshot(e.Stream); err == nil {
			var data snapshot
			if json.Unmarshal(snap.Data, &data) == nil && data.Started != nil {
				a.id, a.dispatch = data.Started.ID, data.Started.Options.DefaultDispatch
			}
		}
	}
	if a.id == "" {
		_, a.id, _ = strings.Cut(e.Stream, "/")
	}
	r.agentsOf[e.Stream] = a
	return a, nil
}
