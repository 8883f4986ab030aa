package main

import (
	"errors"
	"strings"
	"testing"
)

func TestRecord(t *testing.T) {
	var l Ledger
	for _, c := range []struct {
		out  string
		err  error
		want Outcome
		ver  int64
	}{
		{`{"ok":true,"version":7,"state":{"count":7}}`, nil, Acked, 7},
		{`{"ok":false,"error":{"type":"unavailable","message":"partition moving"}}`, nil, Refused, 0},
		{``, errors.New("nats: timeout"), NoAnswer, 0},
		{`nats: error: nats: no responders available for request`, nil, NoAnswer, 0},
	} {
		got := l.Record("id", "a", "p", []byte(c.out), c.err)
		if got.Outcome != c.want || got.Version != c.ver {
			t.Errorf("%q, %v: %v v%d, want %v v%d", c.out, c.err, got.Outcome, got.Version, c.want, c.ver)
		}
	}
	if l.Count("p", Acked) != 1 || l.Count("", NoAnswer) != 2 || l.Count("other", Acked) != 0 {
		t.Errorf("counts: %+v", l.Calls)
	}
}

// TestCheck: each way the cluster could lose or double an acknowledged
// call is named; unacknowledged calls may be in the log once or not.
func TestCheck(t *testing.T) {
	ledger := func() *Ledger {
		var l Ledger
		l.Record("1", "a", "before", []byte(`{"ok":true,"version":1}`), nil)
		l.Record("2", "a", "outage", nil, errors.New("timeout"))
		l.Record("3", "a", "outage", []byte(`{"ok":false}`), nil)
		l.Record("4", "b", "after", []byte(`{"ok":true,"version":1}`), nil)
		return &l
	}
	for _, c := range []struct {
		name string
		logs map[string]AgentLog
		want string // "" for clean
	}{
		{"clean", map[string]AgentLog{"a": {[]string{"1"}, 1}, "b": {[]string{"4"}, 1}}, ""},
		{"unacknowledged committed once", map[string]AgentLog{"a": {[]string{"1", "2", "3"}, 3}, "b": {[]string{"4"}, 1}}, ""},
		{"acked lost", map[string]AgentLog{"a": {nil, 0}, "b": {[]string{"4"}, 1}}, "acknowledged call 1"},
		{"acked twice", map[string]AgentLog{"a": {[]string{"1", "1"}, 2}, "b": {[]string{"4"}, 1}}, "in the log 2 times"},
		{"unacked twice", map[string]AgentLog{"a": {[]string{"1", "2", "2"}, 3}, "b": {[]string{"4"}, 1}}, "no-answer call 2 is in the log 2 times"},
		{"state off", map[string]AgentLog{"a": {[]string{"1"}, 2}, "b": {[]string{"4"}, 1}}, "state count 2, but 1"},
		{"stranger", map[string]AgentLog{"a": {[]string{"1", "x"}, 2}, "b": {[]string{"4"}, 1}}, "never sent"},
		{"wrong agent", map[string]AgentLog{"a": {[]string{"1"}, 1}, "b": {[]string{"4", "2"}, 2}}, "was sent to a"},
	} {
		bad := ledger().Check(c.logs)
		switch {
		case c.want == "" && len(bad) > 0:
			t.Errorf("%s: %v", c.name, bad)
		case c.want != "" && !strings.Contains(strings.Join(bad, "\n"), c.want):
			t.Errorf("%s: %v, want %q", c.name, bad, c.want)
		}
	}
	l := ledger()
	l.Record("5", "a", "after", []byte(`{"ok":true,"version":1}`), nil)
	if bad := l.Check(map[string]AgentLog{"a": {[]string{"1", "5"}, 2}, "b": {[]string{"4"}, 1}}); !strings.Contains(strings.Join(bad, "\n"), "both acknowledged as version 1") {
		t.Errorf("two acks of one version: %v", bad)
	}
}

func TestDecisionIncrements(t *testing.T) {
	ids, err := decisionIncrements([]byte(`[{"specversion":"1.0","id":"p-5","source":"compose-smoke","type":"counter.increment","data":{"by":1}},{"specversion":"1.0","id":"cmd:compose-smoke#p-5","source":"jido-bus:runtime","type":"jido.agent.cmd"}]`))
	if err != nil || len(ids) != 1 || ids[0] != "p-5" {
		t.Fatalf("%v, %v", ids, err)
	}
	if ids, err := decisionIncrements([]byte(`[{"id":"effects:1:0:1","type":"jido.agent.effects"}]`)); err != nil || len(ids) != 0 {
		t.Fatalf("effects only: %v, %v", ids, err)
	}
	if _, err := decisionIncrements([]byte(`{"id":"x"}`)); err == nil {
		t.Fatal("an object, not an array: no error")
	}
}
