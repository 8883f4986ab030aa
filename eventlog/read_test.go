package eventlog

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jido-bus/jido-bus/bus"
)

func TestReads(t *testing.T) {
	l := openMem(t, Options{})
	// agent/a: 1 user.created, 2 user.deleted, 3 user.created, 4 audit.log.read, 5 user.created
	mustAppend(t, l, "agent/a", sig("user.created", "a1"), sig("user.deleted", "a2"))
	mustAppend(t, l, "agent/b", sig("user.created", "b1"))
	mustAppend(t, l, "agent/a", sig("user.created", "a3"), sig("audit.log.read", "a4"), sig("user.created", "a5"))
	cases := []struct {
		name   string
		stream string // "" reads the global log
		opts   ReadOptions
		want   []string // event ids in order
	}{
		{"whole stream", "agent/a", ReadOptions{}, []string{"a1", "a2", "a3", "a4", "a5"}},
		{"from a sequence", "agent/a", ReadOptions{From: 3}, []string{"a3", "a4", "a5"}},
		{"from past the head", "agent/a", ReadOptions{From: 9}, nil},
		{"limit", "agent/a", ReadOptions{From: 2, Limit: 2}, []string{"a2", "a3"}},
		{"last two", "agent/a", ReadOptions{Backward: true, Limit: 2}, []string{"a5", "a4"}},
		{"backward from", "agent/a", ReadOptions{Backward: true, From: 2}, []string{"a2", "a1"}},
		{"backward from past the head", "agent/a", ReadOptions{Backward: true, From: 99, Limit: 1}, []string{"a5"}},
		{"type filter", "agent/a", ReadOptions{Types: "user.created"}, []string{"a1", "a3", "a5"}},
		{"type filter with limit counts matches", "agent/a", ReadOptions{Types: "user.*", Limit: 3}, []string{"a1", "a2", "a3"}},
		{"multi-segment wildcard", "agent/a", ReadOptions{Types: "audit.**"}, []string{"a4"}},
		{"global log", "", ReadOptions{}, []string{"a1", "a2", "b1", "a3", "a4", "a5"}},
		{"global from", "", ReadOptions{From: 3, Limit: 2}, []string{"b1", "a3"}},
		{"global backward", "", ReadOptions{Backward: true, Limit: 2}, []string{"a5", "a4"}},
		{"global filtered", "", ReadOptions{Types: "**.created"}, []string{"a1", "b1", "a3", "a5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var entries []Entry
			if tc.stream == "" {
				entries = collect(t, l.ReadAll(tc.opts))
			} else {
				entries = collect(t, l.ReadStream(tc.stream, tc.opts))
			}
			var ids []string
			for _, e := range entries {
				ids = append(ids, e.Event.ID())
			}
			if diff := cmp.Diff(tc.want, ids); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadRoundTripsTheEvent(t *testing.T) {
	l := openMem(t, Options{})
	in := sig("user.created", "e1")
	in.SetSubject("alice")
	in.SetDataSchema("https://example.com/schema.json")
	in.SetExtension(bus.ExtCorrelationID, "corr-1")
	in.SetExtension("attempt", 3)
	res := mustAppend(t, l, "agent/a", in)
	got := collect(t, l.ReadStream("agent/a", ReadOptions{}))
	if len(got) != 1 {
		t.Fatalf("read %d entries", len(got))
	}
	e := got[0]
	if e.Stream != "agent/a" || e.Seq != 1 || e.GlobalSeq != res.Positions[0].GlobalSeq || e.Time.IsZero() {
		t.Fatalf("position = %s %d %d %v", e.Stream, e.Seq, e.GlobalSeq, e.Time)
	}
	// Extensions come back in their canonical string form, as through
	// CloudEvents JSON.
	in.SetExtension("attempt", "3")
	wantJSON, _ := in.MarshalJSON()
	gotJSON, _ := e.Event.MarshalJSON()
	if diff := cmp.Diff(string(wantJSON), string(gotJSON)); diff != "" {
		t.Fatalf("event (-want +got):\n%s", diff)
	}
}

func TestReadErrors(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sigs("t.x", "a", 5)...)
	if _, err := l.TruncateBefore(t.Context(), "agent/a", 3); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		stream string
		opts   ReadOptions
		is     error
		reason string
	}{
		{"unknown stream", "agent/nobody", ReadOptions{}, ErrNotFound, ""},
		{"truncated position", "agent/a", ReadOptions{From: 2}, ErrGone, ""},
		{"invalid stream", "agent//a", ReadOptions{}, nil, ReasonInvalidStream},
		{"invalid pattern", "agent/a", ReadOptions{Types: "a.**.**"}, nil, bus.ReasonInvalidPattern},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got error
			for _, err := range l.ReadStream(tc.stream, tc.opts) {
				got = err
				break
			}
			if tc.is != nil && !errors.Is(got, tc.is) {
				t.Fatalf("err = %v, want %v", got, tc.is)
			}
			if tc.reason != "" && bus.ErrorType(got) != tc.reason {
				t.Fatalf("err = %v, want type %s", got, tc.reason)
			}
		})
	}
	if ge, ok := errors.AsType[*GoneError](firstErr(l, "agent/a", 1)); !ok || ge.First != 3 || ge.Stream != "agent/a" {
		t.Fatalf("GoneError = %+v", ge)
	}
	// From zero reads what is retained, without an error.
	if got := seqs(collect(t, l.ReadStream("agent/a", ReadOptions{}))); !cmp.Equal(got, []uint64{3, 4, 5}) {
		t.Fatalf("retained = %v", got)
	}
}

func firstErr(l *Log, stream string, from uint64) error {
	for _, err := range l.ReadStream(stream, ReadOptions{From: from}) {
		return err
	}
	return nil
}
