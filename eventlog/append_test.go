package eventlog

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/jido-bus/jido-bus/bus"
)

// appendStep is one Append call and what it must answer.
type appendStep struct {
	stream   string
	expected ExpectedVersion
	ids      []string // event ids; each event has type "test.event"
	want     []Position
	wantErr  error // matched with errors.Is
}

func TestAppendExpectedVersionAndIdempotency(t *testing.T) {
	p := func(seq, gseq uint64) Position { return Position{Seq: seq, GlobalSeq: gseq} }
	dup := func(seq, gseq uint64) Position { return Position{Seq: seq, GlobalSeq: gseq, Duplicate: true} }
	cases := []struct {
		name  string
		steps []appendStep
		heads map[string]uint64 // stream → head afterwards
	}{
		{"any version appends in order", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []Position{p(1, 1), p(2, 2)}},
			{stream: "agent/a", ids: []string{"3"}, want: []Position{p(3, 3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"no stream on a new stream", []appendStep{
			{stream: "agent/a", expected: NoStream, ids: []string{"1"}, want: []Position{p(1, 1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"no stream on an existing stream fails", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []Position{p(1, 1)}},
			{stream: "agent/a", expected: NoStream, ids: []string{"2"}, wantErr: ErrWrongVersion},
		}, map[string]uint64{"agent/a": 1}},
		{"exact version matches", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []Position{p(1, 1), p(2, 2)}},
			{stream: "agent/a", expected: ExactVersion(2), ids: []string{"3"}, want: []Position{p(3, 3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"exact version behind fails and writes nothing", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []Position{p(1, 1), p(2, 2)}},
			{stream: "agent/a", expected: ExactVersion(1), ids: []string{"3", "4"}, wantErr: ErrWrongVersion},
			{stream: "agent/a", ids: []string{"5"}, want: []Position{p(3, 3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"exact version ahead fails", []appendStep{
			{stream: "agent/a", expected: ExactVersion(4), ids: []string{"1"}, wantErr: ErrWrongVersion},
		}, map[string]uint64{}},
		{"exact version 0 is no stream", []appendStep{
			{stream: "agent/a", expected: ExactVersion(0), ids: []string{"1"}, want: []Position{p(1, 1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"duplicate reports the existing position", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []Position{p(1, 1), p(2, 2)}},
			{stream: "agent/a", ids: []string{"2"}, want: []Position{dup(2, 2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"retry with a stale expected version succeeds as duplicate", []appendStep{
			{stream: "agent/a", expected: NoStream, ids: []string{"1"}, want: []Position{p(1, 1)}},
			{stream: "agent/a", expected: NoStream, ids: []string{"1"}, want: []Position{dup(1, 1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"duplicates inside one call", []appendStep{
			{stream: "agent/a", ids: []string{"1", "1", "2"}, want: []Position{p(1, 1), dup(1, 1), p(2, 2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"partial duplicate writes only the new events", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []Position{p(1, 1)}},
			{stream: "agent/a", expected: ExactVersion(1), ids: []string{"1", "2"}, want: []Position{dup(1, 1), p(2, 2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"same id in another stream is not a duplicate", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []Position{p(1, 1)}},
			{stream: "agent/b", ids: []string{"1"}, want: []Position{p(1, 2)}},
		}, map[string]uint64{"agent/a": 1, "agent/b": 1}},
		{"global sequence spans streams", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []Position{p(1, 1)}},
			{stream: "conversation/p/c", ids: []string{"2", "3"}, want: []Position{p(1, 2), p(2, 3)}},
			{stream: "agent/a", ids: []string{"4"}, want: []Position{p(2, 4)}},
		}, map[string]uint64{"agent/a": 2, "conversation/p/c": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := openMem(t, Options{})
			for i, st := range tc.steps {
				events := make([]bus.Signal, len(st.ids))
				for j, id := range st.ids {
					events[j] = sig("test.event", id)
				}
				res, err := l.Append(context.Background(), st.stream, st.expected, events...)
				if st.wantErr != nil {
					if !errors.Is(err, st.wantErr) {
						t.Fatalf("step %d: err = %v, want %v", i, err, st.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if diff := cmp.Diff(st.want, res.Positions); diff != "" {
					t.Fatalf("step %d positions (-want +got):\n%s", i, diff)
				}
			}
			heads := map[string]uint64{}
			for _, s := range l.Streams("") {
				heads[s.Stream] = s.Head
				if got := uint64(len(collect(t, l.ReadStream(s.Stream, ReadOptions{})))); got != s.Count {
					t.Errorf("%s: %d entries readable, metadata says %d", s.Stream, got, s.Count)
				}
			}
			if diff := cmp.Diff(tc.heads, heads); diff != "" {
				t.Fatalf("heads (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendErrorNamesStreamAndVersions(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/a", sig("t.x", "1"))
	_, err := l.Append(context.Background(), "agent/a", ExactVersion(5), sig("t.x", "2"))
	ae, ok := errors.AsType[*AppendError](err)
	if !ok {
		t.Fatalf("err = %v, want *AppendError", err)
	}
	if ae.Stream != "agent/a" || ae.Expected != ExactVersion(5) || ae.Actual != 1 {
		t.Fatalf("AppendError = %+v", ae)
	}
	if msg := err.Error(); !strings.Contains(msg, "agent/a") || !strings.Contains(msg, "expected version 5") {
		t.Fatalf("message %q does not name stream and versions", msg)
	}
}

func TestAppendMultiIsAtomic(t *testing.T) {
	l := openMem(t, Options{})
	mustAppend(t, l, "agent/b", sig("t.x", "b1"))
	ctx := context.Background()
	// The second part's expectation fails, so the first part must not land.
	_, err := l.AppendMulti(ctx, []StreamAppend{
		{Stream: "agent/a", Expected: NoStream, Events: []bus.Signal{sig("t.x", "a1")}},
		{Stream: "agent/b", Expected: NoStream, Events: []bus.Signal{sig("t.x", "b2")}},
	})
	if !errors.Is(err, ErrWrongVersion) {
		t.Fatalf("err = %v, want ErrWrongVersion", err)
	}
	if _, err := l.Stream("agent/a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("agent/a exists after a failed multi-append: %v", err)
	}
	res, err := l.AppendMulti(ctx, []StreamAppend{
		{Stream: "agent/a", Expected: NoStream, Events: []bus.Signal{sig("t.x", "a1")}},
		{Stream: "agent/b", Expected: ExactVersion(1), Events: []bus.Signal{sig("t.x", "b2")}},
		{Stream: "agent/a", Expected: ExactVersion(1), Events: []bus.Signal{sig("t.x", "a2")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := []uint64{res[0].Version, res[1].Version, res[2].Version}
	if diff := cmp.Diff([]uint64{1, 2, 2}, got); diff != "" {
		t.Fatalf("versions (-want +got):\n%s", diff)
	}
	all := collect(t, l.ReadAll(ReadOptions{}))
	if len(all) != 4 || all[3].Stream != "agent/a" || all[3].Seq != 2 {
		t.Fatalf("global log = %+v", all)
	}
}

// TestAppendAllNew: with AllNew a duplicate — stored before, or twice in
// the same append — fails the whole call and writes nothing; without one
// the append is an ordinary one.
func TestAppendAllNew(t *testing.T) {
	l := openMem(t, Options{})
	ctx := context.Background()
	mustAppend(t, l, "agent/a", sig("t.x", "a1"))
	mustAppend(t, l, "agent/b", sig("t.x", "b1"))
	cases := []struct {
		name  string
		parts []StreamAppend
		index int
		id    string
		seq   uint64
	}{
		{"stored before", []StreamAppend{
			{Stream: "agent/b", Expected: ExactVersion(1), Events: []bus.Signal{sig("t.x", "b2")}},
			{Stream: "agent/a", Expected: ExactVersion(1), AllNew: true, Events: []bus.Signal{sig("t.x", "a2"), sig("t.x", "a1"), sig("t.x", "a3")}},
		}, 1, "a1", 1},
		{"twice in the append", []StreamAppend{
			{Stream: "agent/a", Expected: ExactVersion(1), AllNew: true, Events: []bus.Signal{sig("t.x", "a2"), sig("t.x", "a2")}},
		}, 1, "a2", 2},
	}
	for _, c := range cases {
		_, err := l.AppendMulti(ctx, c.parts)
		de, ok := errors.AsType[*DuplicateError](err)
		if !ok || !errors.Is(err, ErrDuplicate) || de.Stream != "agent/a" || de.Index != c.index || de.ID != c.id || de.Existing.Seq != c.seq {
			t.Fatalf("%s: err = %v, want a duplicate of %s at index %d, seq %d", c.name, err, c.id, c.index, c.seq)
		}
		for _, stream := range []string{"agent/a", "agent/b"} {
			if info, _ := l.Stream(stream); info.Head != 1 {
				t.Fatalf("%s: %s is at %d after a refused append", c.name, stream, info.Head)
			}
		}
	}
	// Without the option a duplicate is skipped, as always.
	res, err := l.Append(ctx, "agent/a", ExactVersion(1), sig("t.x", "a1"), sig("t.x", "a2"))
	if err != nil || !res.Positions[0].Duplicate || res.Version != 2 {
		t.Fatalf("ordinary append: %+v %v", res, err)
	}
	res2, err := l.AppendMulti(ctx, []StreamAppend{{Stream: "agent/a", Expected: ExactVersion(2), AllNew: true, Events: []bus.Signal{sig("t.x", "a3"), sig("t.x", "a4")}}})
	if err != nil || res2[0].Version != 4 {
		t.Fatalf("all-new append of new events: %+v %v", res2, err)
	}
}

func TestAppendRejectsBadInputAndWritesNothing(t *testing.T) {
	big := sig("t.x", "big")
	if err := bus.SetJSONData(&big, []byte(`"`+strings.Repeat("x", 2000)+`"`)); err != nil {
		t.Fatal(err)
	}
	noID := sig("t.x", "x")
	noID.Context.(*event.EventContextV1).ID = ""
	badType := sig("t.x", "y")
	badType.SetType("bad..type")
	noSource := sig("t.x", "z")
	noSource.Context.(*event.EventContextV1).Source = types.URIRef{}
	longSubject := sig("t.x", "s")
	longSubject.SetSubject(strings.Repeat("s", 5000))
	cases := []struct {
		name   string
		stream string
		events []bus.Signal
		reason string // the bus.Error type
		inMsg  string
	}{
		{"oversize data", "agent/a", []bus.Signal{sig("t.x", "ok"), big}, bus.ReasonTooLarge, "event 1"},
		{"oversize attributes", "agent/a", []bus.Signal{longSubject}, bus.ReasonTooLarge, "attributes"},
		{"missing id", "agent/a", []bus.Signal{noID}, bus.ReasonMissingAttribute, "id"},
		{"missing source", "agent/a", []bus.Signal{noSource}, bus.ReasonMissingAttribute, "source"},
		{"malformed type", "agent/a", []bus.Signal{badType}, bus.ReasonInvalidType, "bad..type"},
		{"no events", "agent/a", nil, bus.ReasonInvalidRequest, "no events"},
		{"empty stream", "", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "empty"},
		{"empty segment", "agent//a", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "empty segment at position 1"},
		{"trailing slash", "agent/", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "empty segment at position 1"},
		{"bad byte", "agent/a b", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "' '"},
		{"nul byte", "agent/a\x00", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "not allowed"},
		{"leading dash", "agent/-a", []bus.Signal{sig("t.x", "1")}, ReasonInvalidStream, "must start"},
		{"too many events", "agent/a", sigs("t.x", "n", 11), bus.ReasonTooLarge, "limit is 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := openMem(t, Options{Limits: bus.Limits{MaxDataBytes: 1000, MaxAttributeBytes: 4096}, MaxAppendEvents: 10})
			_, err := l.Append(context.Background(), tc.stream, AnyVersion, tc.events...)
			if err == nil {
				t.Fatal("append succeeded")
			}
			if got := bus.ErrorType(err); got != tc.reason {
				t.Fatalf("error type %q, want %q (err: %v)", got, tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.inMsg) {
				t.Fatalf("error %q does not mention %q", err, tc.inMsg)
			}
			if s := l.Streams(""); len(s) != 0 || l.Durable() != 0 {
				t.Fatalf("something was written: streams %v, durable %d", s, l.Durable())
			}
		})
	}
}

func TestValidStreamNames(t *testing.T) {
	for _, name := range []string{"agent/c1", "agent/p/t", "conversation/proj/conv", "project/x", "dlq", "agent/a.b_c-d", "A1"} {
		if err := ValidateStream(name); err != nil {
			t.Errorf("ValidateStream(%q) = %v", name, err)
		}
	}
	if err := ValidateStream(strings.Repeat("a", MaxStreamLen+1)); bus.ErrorType(err) != ReasonInvalidStream {
		t.Errorf("over-long name: %v", err)
	}
}

func TestAppendAfterCloseFails(t *testing.T) {
	l := openMem(t, Options{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), "agent/a", AnyVersion, sig("t.x", "1")); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}
