package projections

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Projection is a pure fold of log entries into a state of type S.
//
// A Runner calls Init and Apply from one goroutine at a time per Runner,
// but queries (Runner.At) fold on the caller's goroutine, so the methods
// of one Projection may be called concurrently: they must not keep mutable
// state of their own (configuration set before use is fine).
//
// Apply must be pure: no I/O, no clock, no randomness, and no dependence on
// anything but the state and the entry, so that a rebuild gives the same
// states as the original run. Time comes from the entry (Entry.Time, or the
// event's own time).
//
// Apply owns the state it is given: it may modify it in place and return
// it, and the caller never uses the value it passed in again. That lets a
// fold append to a slice without copying the state each time. Apply must
// not keep the state, nor the entry, after it returns (copy what it needs;
// strings and byte slices of the entry may be kept, as the log hands out
// entries that own their memory).
//
// A Projection whose Apply changes meaning must change its Version, which
// makes every Runner rebuild it from the start of the log.
type Projection[S any] interface {
	// Name identifies the projection in the Store, on the CLI and over
	// NATS: lower-case letters, digits, '_', '-' and '.'.
	Name() string
	// Version is compared with the version stored beside the checkpoint;
	// any difference discards the stored states and rebuilds them. It is
	// opaque: "1", "2+window=50" …
	Version() string
	// Selector says which entries the projection reads and how its states
	// are keyed.
	Selector() Selector
	// Init returns the state of a key before any entry. Each call returns a
	// new value that shares nothing with the values of earlier calls.
	Init() S
	// Apply folds e into state and returns the new state; see the type's
	// documentation for ownership.
	Apply(state S, e *Entry) S
}

// Preparer is implemented by a Projection whose Apply starts with work
// that depends on the entry alone, usually decoding the event's data
// through a Memo. A Runner calls Prepare for each entry the projection
// selects before it calls Apply with that entry, on the goroutine that
// reads the log ahead of the fold, so the work runs on another core while
// earlier entries are folded. Prepare may be called concurrently with
// Apply (of earlier entries) and with other calls of Prepare; like Apply it
// must be pure, and it must not keep the entry. A Prepare that panics is
// ignored: Apply then does the work and the Runner reports the panic.
type Preparer interface {
	Prepare(e *Entry)
}

// Selector chooses the entries a projection reads and keys its states.
type Selector struct {
	// StreamPrefix selects entries of streams whose name starts with it
	// ("conversation/"); empty selects every stream.
	StreamPrefix string
	// Types is a bus pattern ("conversation.**") the event type must
	// match; empty matches every type.
	Types string
	// PerStream keeps one state per stream, keyed by the stream name
	// without StreamPrefix ("p1/c7" for "conversation/p1/c7"). Otherwise
	// the projection has one state, under the key "".
	PerStream bool
}

// Entry is a log entry as a projection sees it. Besides the entry it
// carries the decodings that projections fed from the same pass share (see
// Memo); an Entry is used by one goroutine.
type Entry struct {
	eventlog.Entry
	memo []memoSlot
}

type memoSlot struct {
	key any
	val any
}

// NewEntry wraps a log entry for Apply, for folds outside a Runner
// (tests, tools).
func NewEntry(e eventlog.Entry) *Entry { return &Entry{Entry: e} }

// Memo computes a value from an entry at most once per Entry, however many
// projections ask for it: the projections of a Runner receive the same
// *Entry, so four read models over the same events decode each event's
// data once. A Memo is immutable and safe for concurrent use; the value it
// returns is shared by those projections, which must only read it.
type Memo[T any] struct {
	fn      func(*eventlog.Entry) T
	recycle func(T)
}

// NewMemo returns a Memo computing fn. fn must be pure.
func NewMemo[T any](fn func(*eventlog.Entry) T) *Memo[T] { return &Memo[T]{fn: fn} }

// NewRecycledMemo is NewMemo whose values a Runner hands to recycle once
// every projection has folded their entry, so that fn can reuse their
// memory for later entries: a rebuild computes one value per entry of the
// log, and allocating each was a third of the bytes a rebuild of the
// conversation read models allocated. Only a Runner's own pass recycles;
// the values of entries made with NewEntry, and of Runner.At's folds, are
// left to the garbage collector. Apply must not keep such a value, as it
// must not keep the entry.
func NewRecycledMemo[T any](fn func(*eventlog.Entry) T, recycle func(T)) *Memo[T] {
	return &Memo[T]{fn: fn, recycle: recycle}
}

// release hands v, a value of m, to its recycle function.
func (m *Memo[T]) release(v any) {
	if m.recycle != nil {
		m.recycle(v.(T))
	}
}

// releaser is every Memo, whatever its T.
type releaser interface{ release(v any) }

// Of returns fn(e), computed on the first call for e.
func (m *Memo[T]) Of(e *Entry) T {
	for _, s := range e.memo {
		if s.key == m {
			return s.val.(T)
		}
	}
	v := m.fn(&e.Entry)
	e.memo = append(e.memo, memoSlot{key: m, val: v})
	return v
}

// Definition is a Projection with its state type erased, as a Runner holds
// it. Make one with Define. It is immutable and safe for concurrent use.
type Definition struct {
	name, version string
	sel           Selector
	types         bus.Pattern
	hasTypes      bool
	init          func() any
	apply         func(any, *Entry) any
	prepare       func(*Entry) // nil unless the projection is a Preparer
	encode        func(any) ([]byte, error)
	appendEncode  func([]byte, any) ([]byte, error) // encode, appended to a buffer
	decode        func([]byte) (any, error)
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// Define checks p and erases its state type. States are stored as their
// encoding/json encoding, so S must survive a JSON round trip.
func Define[S any](p Projection[S]) (Definition, error) {
	name := p.Name()
	if !nameRE.MatchString(name) || len(name) > 200 {
		return Definition{}, fmt.Errorf("projection name %q: want lower-case letters, digits, '_', '-' and '.'", name)
	}
	d := Definition{
		name:         name,
		version:      p.Version(),
		sel:          p.Selector(),
		init:         func() any { return p.Init() },
		apply:        func(s any, e *Entry) any { return p.Apply(s.(S), e) },
		encode:       encoder[S](),
		appendEncode: appendEncoder[S](),
		decode: func(b []byte) (any, error) {
			var s S
			err := json.Unmarshal(b, &s)
			return s, err
		},
	}
	if pr, ok := any(p).(Preparer); ok {
		d.prepare = pr.Prepare
	}
	if d.sel.Types != "" {
		pat, err := bus.CompilePattern(d.sel.Types)
		if err != nil {
			return Definition{}, fmt.Errorf("projection %s: selector types: %w", name, err)
		}
		d.types, d.hasTypes = pat, true
	}
	return d, nil
}

// JSONAppender is implemented by a state type that encodes itself faster
// than encoding/json does: AppendJSON appends to dst exactly the bytes
// json.Marshal gives for the state, and reports false (having appended
// anything or nothing) when it cannot, in which case json.Marshal is used.
// A Runner encodes every changed state at each checkpoint, so this is
// where a large state's encoding cost goes.
type JSONAppender interface {
	AppendJSON(dst []byte) ([]byte, bool)
}

// encoder returns the encoding of states of type S: their AppendJSON when
// they have one, else json.Marshal.
func encoder[S any]() func(any) ([]byte, error) {
	var zero S
	if _, ok := any(zero).(JSONAppender); !ok {
		return func(s any) ([]byte, error) { return json.Marshal(s.(S)) }
	}
	return func(s any) ([]byte, error) {
		if b, ok := s.(JSONAppender).AppendJSON(nil); ok {
			return b, nil
		}
		return json.Marshal(s.(S))
	}
}

// appendEncoder is encoder appending to a buffer, for encodings that are
// copied at once (into a Pebble batch) and need no memory of their own.
func appendEncoder[S any]() func([]byte, any) ([]byte, error) {
	var zero S
	marshal := func(dst []byte, s any) ([]byte, error) {
		b, err := json.Marshal(s.(S))
		return append(dst, b...), err
	}
	if _, ok := any(zero).(JSONAppender); !ok {
		return marshal
	}
	return func(dst []byte, s any) ([]byte, error) {
		if b, ok := s.(JSONAppender).AppendJSON(dst); ok {
			return b, nil
		}
		return marshal(dst, s)
	}
}

// MustDefine is Define for projections built into a program; it panics on
// a bad definition.
func MustDefine[S any](p Projection[S]) Definition {
	d, err := Define(p)
	if err != nil {
		panic(err)
	}
	return d
}

// Name returns the projection's name.
func (d Definition) Name() string { return d.name }

// Version returns the projection's version.
func (d Definition) Version() string { return d.version }

// Selector returns the projection's selector.
func (d Definition) Selector() Selector { return d.sel }

// key returns the state key e belongs to, and false when the projection
// does not read e.
func (d *Definition) key(e *eventlog.Entry) (string, bool) {
	return d.keyOf(e, true)
}

// keyOf is key; matchTypes false skips matching the type pattern, for
// entries a subscription has already filtered with it.
func (d *Definition) keyOf(e *eventlog.Entry, matchTypes bool) (string, bool) {
	if !strings.HasPrefix(e.Stream, d.sel.StreamPrefix) {
		return "", false
	}
	if matchTypes && d.hasTypes && !d.types.Match(e.Event.Type()) {
		return "", false
	}
	if !d.sel.PerStream {
		return "", true
	}
	key := e.Stream[len(d.sel.StreamPrefix):]
	return key, key != ""
}
