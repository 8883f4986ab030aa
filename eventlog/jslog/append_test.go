package jslog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// appendStep is one Append call and what it must answer.
type appendStep struct {
	stream   string
	expected eventlog.ExpectedVersion
	ids      []string
	want     []eventlog.Position // Seq and Duplicate; GlobalSeq is JetStream's
	wantErr  error
}

// TestAppendContract runs the Pebble log's expected-version and
// idempotence cases (eventlog's TestAppendExpectedVersionAndIdempotency)
// against the JetStream log, each case on streams of its own.
func TestAppendContract(t *testing.T) {
	p := func(seq uint64) eventlog.Position { return eventlog.Position{Seq: seq} }
	dup := func(seq uint64) eventlog.Position { return eventlog.Position{Seq: seq, Duplicate: true} }
	cases := []struct {
		name  string
		steps []appendStep
		heads map[string]uint64
	}{
		{"any version appends in order", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []eventlog.Position{p(1), p(2)}},
			{stream: "agent/a", ids: []string{"3"}, want: []eventlog.Position{p(3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"no stream on a new stream", []appendStep{
			{stream: "agent/a", expected: eventlog.NoStream, ids: []string{"1"}, want: []eventlog.Position{p(1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"no stream on an existing stream fails", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []eventlog.Position{p(1)}},
			{stream: "agent/a", expected: eventlog.NoStream, ids: []string{"2"}, wantErr: eventlog.ErrWrongVersion},
		}, map[string]uint64{"agent/a": 1}},
		{"exact version matches", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []eventlog.Position{p(1), p(2)}},
			{stream: "agent/a", expected: eventlog.ExactVersion(2), ids: []string{"3"}, want: []eventlog.Position{p(3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"exact version behind fails and writes nothing", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []eventlog.Position{p(1), p(2)}},
			{stream: "agent/a", expected: eventlog.ExactVersion(1), ids: []string{"3", "4"}, wantErr: eventlog.ErrWrongVersion},
			{stream: "agent/a", ids: []string{"5"}, want: []eventlog.Position{p(3)}},
		}, map[string]uint64{"agent/a": 3}},
		{"exact version ahead fails", []appendStep{
			{stream: "agent/a", expected: eventlog.ExactVersion(4), ids: []string{"1"}, wantErr: eventlog.ErrWrongVersion},
		}, map[string]uint64{}},
		{"exact version 0 is no stream", []appendStep{
			{stream: "agent/a", expected: eventlog.ExactVersion(0), ids: []string{"1"}, want: []eventlog.Position{p(1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"duplicate reports the existing position", []appendStep{
			{stream: "agent/a", ids: []string{"1", "2"}, want: []eventlog.Position{p(1), p(2)}},
			{stream: "agent/a", ids: []string{"2"}, want: []eventlog.Position{dup(2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"retry with a stale expected version succeeds as duplicate", []appendStep{
			{stream: "agent/a", expected: eventlog.NoStream, ids: []string{"1"}, want: []eventlog.Position{p(1)}},
			{stream: "agent/a", expected: eventlog.NoStream, ids: []string{"1"}, want: []eventlog.Position{dup(1)}},
		}, map[string]uint64{"agent/a": 1}},
		{"duplicates inside one call", []appendStep{
			{stream: "agent/a", ids: []string{"1", "1", "2"}, want: []eventlog.Position{p(1), dup(1), p(2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"partial duplicate writes only the new events", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []eventlog.Position{p(1)}},
			{stream: "agent/a", expected: eventlog.ExactVersion(1), ids: []string{"1", "2"}, want: []eventlog.Position{dup(1), p(2)}},
		}, map[string]uint64{"agent/a": 2}},
		{"same id in another stream is not a duplicate", []appendStep{
			{stream: "agent/a", ids: []string{"1"}, want: []eventlog.Position{p(1)}},
			{stream: "agent/b", ids: []string{"1"}, want: []eventlog.Position{p(1)}},
		}, map[string]uint64{"agent/a": 1, "agent/b": 1}},
	}
	l, _ := openLog(t, Options{})
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case's streams are its own: agent/a becomes agent/a-<case>.
			name := func(s string) string { return fmt.Sprintf("%s-%d", s, ci) }
			for i, st := range tc.steps {
				res, err := l.Append(context.Background(), name(st.stream), st.expected, sigs("test.event", st.ids...)...)
				if st.wantErr != nil {
					if !errors.Is(err, st.wantErr) {
						t.Fatalf("step %d: err = %v, want %v", i, err, st.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if diff := cmp.Diff(st.want, res.Positions, cmpopts.IgnoreFields(eventlog.Position{}, "GlobalSeq")); diff != "" {
					t.Fatalf("step %d positions (-want +got):\n%s", i, diff)
				}
				for j, pos := range res.Positions {
					if pos.GlobalSeq == 0 {
						t.Fatalf("step %d: position %d has no JetStream sequence", i, j)
					}
				}
			}
			for _, s := range []string{"agent/a", "agent/b"} {
				want := tc.heads[s]
				entries := collectAll(l, name(s))
				if uint64(len(entries)) != want {
					t.Fatalf("%s holds %d entries, want %d", s, len(entries), want)
				}
				for i, e := range entries {
					if e.Seq != uint64(i+1) {
						t.Fatalf("%s entry %d has version %d", s, i, e.Seq)
					}
				}
			}
		})
	}
}

// collectAll reads a whole stream; an unknown stream is empty.
func collectAll(l *Log, stream string) []eventlog.Entry {
	var out []eventlog.Entry
	for e, err := range l.ReadStream(stream, eventlog.ReadOptions{}) {
		if err != nil {
			return out
		}
		out = append(out, e)
	}
	return out
}

func TestAppendErrorNamesStreamAndVersions(t *testing.T) {
	l, _ := openLog(t, Options{})
	mustAppend(t, l, "agent/a", eventlog.AnyVersion, sig("t.x", "1"))
	_, err := l.Append(context.Background(), "agent/a", eventlog.ExactVersion(5), sig("t.x", "2"))
	ae, ok := errors.AsType[*eventlog.AppendError](err)
	if !ok || ae.Stream != "agent/a" || ae.Expected != eventlog.ExactVersion(5) || ae.Actual != 1 {
		t.Fatalf("err = %v, want an AppendError for agent/a expecting 5 at 1", err)
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	l, _ := openLog(t, Options{MaxAppendEvents: 3})
	cases := []struct {
		name, stream string
		events       []bus.Signal
		reason       string
	}{
		{"no events", "agent/a", nil, bus.ReasonInvalidRequest},
		{"bad stream", "agent//a", sigs("t.x", "1"), eventlog.ReasonInvalidStream},
		{"too many events", "agent/a", sigs("t.x", "1", "2", "3", "4"), bus.ReasonTooLarge},
	}
	for _, c := range cases {
		_, err := l.Append(context.Background(), c.stream, eventlog.AnyVersion, c.events...)
		if bus.ErrorType(err) != c.reason {
			t.Errorf("%s: err = %v, want type %s", c.name, err, c.reason)
		}
	}
	if got := collectAll(l, "agent/a"); len(got) != 0 {
		t.Fatalf("a refused append wrote %d entries", len(got))
	}
}

func TestAppendTooLargeForOneMessage(t *testing.T) {
	nc := cluster.Connect(t)
	l := openOn(t, nc, Options{})
	// Two events, each within the event limit, that together do not fit
	// one message.
	half := []bus.Signal{sig("t.x", "1"), sig("t.x", "2")}
	for i := range half {
		if err := bus.SetJSONData(&half[i], strings.Repeat("x", int(nc.MaxPayload())/2+1)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := l.Append(context.Background(), "agent/a", eventlog.AnyVersion, half...)
	if bus.ErrorType(err) != bus.ReasonTooLarge || !strings.Contains(err.Error(), "max_payload") {
		t.Fatalf("err = %v, want too_large naming max_payload", err)
	}
}
