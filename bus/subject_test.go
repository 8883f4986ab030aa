package bus

import (
	"slices"
	"testing"
)

func TestSubjectsBuildAndParse(t *testing.T) {
	s := Subjects{}
	cases := []struct {
		subject string
		want    Address
	}{
		{s.Agent("c1", "counter.increment"), Address{Kind: KindAgent, AgentID: "c1", Type: "counter.increment"}},
		{s.Agent("team/worker-2", "x"), Address{Kind: KindAgent, AgentID: "team/worker-2", Type: "x"}},
		{s.Signal("user.created"), Address{Kind: KindSignal, Type: "user.created"}},
		{s.Emit("c1", "counter.changed"), Address{Kind: KindEmit, AgentID: "c1", Type: "counter.changed"}},
		{s.API("agent", "start"), Address{Kind: KindAPI, Area: "agent", Verb: "start"}},
		{s.DLQ("malformed"), Address{Kind: KindDLQ, Reason: "malformed"}},
	}
	for _, c := range cases {
		got, err := s.Parse(c.subject)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.subject, got, err, c.want)
		}
	}
}

func TestSubjectsPrefix(t *testing.T) {
	s, err := NewSubjects("acme.jido")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Agent("a", "t"); got != "acme.jido.agent.a.t" {
		t.Fatalf("Agent = %q", got)
	}
	if _, err := s.Parse("jido.agent.a.t"); ErrorType(err) != ReasonInvalidSubject {
		t.Fatalf("a subject under another prefix parsed: %v", err)
	}
	// '_' first is NATS's (inboxes _INBOX.…, the roles' _INBOX_<user>.…):
	// under such a prefix every reply would be the node's own subject.
	for _, bad := range []string{"a..b", "a.*", "a.>", "a b", "_INBOX", "_INBOX_app", "_x.jido"} {
		if _, err := NewSubjects(bad); err == nil {
			t.Errorf("NewSubjects(%q) accepted", bad)
		}
	}
}

func TestParseRejects(t *testing.T) {
	s := Subjects{}
	cases := map[string]string{
		"jido.agent._bad.x":      ReasonInvalidAgentID,
		"jido.agent.a//b.x":      ReasonInvalidAgentID,
		"jido.agent.a/.x":        ReasonInvalidAgentID,
		"jido.agent.a$b.x":       ReasonInvalidAgentID,
		"jido.agent.c1":          ReasonInvalidSubject,
		"jido.agent.c1.":         ReasonInvalidSubject,
		"jido.signal.":           ReasonInvalidType,
		"jido.signal.a..b":       ReasonInvalidType,
		"jido.nosuch.x":          ReasonInvalidSubject,
		"other.agent.c1.x":       ReasonInvalidSubject,
		"jido.api.agent":         ReasonInvalidSubject,
		"jido.dlq.":              ReasonInvalidSubject,
		"jido.agent.c1.a.b..c":   ReasonInvalidType,
		"jido.emit.-lead.x":      ReasonInvalidAgentID,
		"jido.agent.ok-id_1/x.y": "",
	}
	for subject, want := range cases {
		_, err := s.Parse(subject)
		if want == "" {
			if err != nil {
				t.Errorf("Parse(%q) = %v, want success", subject, err)
			}
			continue
		}
		if err == nil || ErrorType(err) != want {
			t.Errorf("Parse(%q) = %v, want %s", subject, err, want)
		}
	}
}

func TestCoverPattern(t *testing.T) {
	cases := []struct {
		pattern string
		want    []string
		filter  bool
	}{
		{"user.created", []string{"jido.signal.user.created"}, false},
		{"user.*", []string{"jido.signal.user.*"}, false},
		{"*", []string{"jido.signal.*"}, false},
		{"audit.**", []string{"jido.signal.audit", "jido.signal.audit.>"}, false},
		{"**", []string{"jido.signal.>"}, false},
		{"*.**", []string{"jido.signal.*", "jido.signal.*.>"}, false},
		{"user.**.created", []string{"jido.signal.user.>"}, true},
		{"**.created", []string{"jido.signal.>"}, true},
		{"a.*.**.b", []string{"jido.signal.a.*.>"}, true},
	}
	for _, c := range cases {
		got, err := CoverPattern("jido.signal", c.pattern)
		if err != nil {
			t.Fatalf("CoverPattern(%q): %v", c.pattern, err)
		}
		if !slices.Equal(got.Subjects, c.want) || got.Filter != c.filter {
			t.Errorf("CoverPattern(%q) = %+v, want %v filter=%v", c.pattern, got, c.want, c.filter)
		}
	}
	if _, err := CoverPattern("jido.signal", "a.**.**"); ErrorType(err) != ReasonInvalidPattern {
		t.Fatalf("invalid pattern translated: %v", err)
	}
}

// TestCoverPatternCoversEveryMatch checks that whatever a pattern matches is
// delivered by one of its NATS subjects, and that without Filter nothing
// else is.
func TestCoverPatternCoversEveryMatch(t *testing.T) {
	types := []string{"a", "b", "a.b", "a.c", "a.b.c", "x.a.b", "a.x.y.b", "c.b"}
	for _, pattern := range []string{"a", "a.*", "a.**", "**", "**.b", "a.**.b", "*.b", "*.**"} {
		cov, err := CoverPattern("p", pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range types {
			delivered := false
			for _, sub := range cov.Subjects {
				delivered = delivered || natsSubjectMatch(sub, "p."+typ)
			}
			matches := MatchPattern(pattern, typ)
			if matches && !delivered {
				t.Errorf("pattern %q: %q matches but %v does not deliver it", pattern, typ, cov.Subjects)
			}
			if delivered && !matches && !cov.Filter {
				t.Errorf("pattern %q: %v delivers %q without a filter", pattern, cov.Subjects, typ)
			}
		}
	}
}

// natsSubjectMatch is NATS's own rule: '*' one token, a trailing '>' one or more.
func natsSubjectMatch(sub, subject string) bool {
	var st, tt []string
	st = splitSegments(st, sub)
	tt = splitSegments(tt, subject)
	for i, s := range st {
		if s == ">" {
			return len(tt) > i
		}
		if i >= len(tt) || (s != "*" && s != tt[i]) {
			return false
		}
	}
	return len(st) == len(tt)
}
