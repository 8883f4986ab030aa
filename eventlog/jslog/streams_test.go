package jslog

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jido-bus/jido-bus/eventlog"
)

// TestStreamsListsEveryPartition: the streams come from the partition
// streams' subjects, sorted by name across partitions, with each one's
// version from its last message, narrowed by a prefix (whole segments and
// a partial last one), and paged by After with Next naming the last of a
// page.
func TestStreamsListsEveryPartition(t *testing.T) {
	l, _ := openLog(t, Options{Partitions: 3})
	heads := map[string]int{"agent/a": 3, "agent/b": 1, "agent/b/child": 2, "agent/c.d": 1, "agents/x": 1, "conversation/p/c": 2, IndexStream(2): 1}
	for stream, n := range heads {
		for i := range n {
			mustAppend(t, l, stream, eventlog.AnyVersion, sig("test.event", itoaU(uint64(i+1))))
		}
	}
	// One append of several events is one message and several versions.
	mustAppend(t, l, "agent/a", eventlog.ExactVersion(3), sigs("test.event", "4", "5")...)
	heads["agent/a"] = 5
	parts := map[int]bool{}
	for s := range heads {
		parts[Partition(s, 3)] = true
	}
	if len(parts) < 2 {
		t.Fatalf("the streams all fall in one partition: the test shows nothing about listing across them")
	}

	info := func(names ...string) []eventlog.StreamInfo {
		out := []eventlog.StreamInfo{}
		for _, n := range names {
			h := uint64(heads[n])
			out = append(out, eventlog.StreamInfo{Stream: n, Head: h, First: 1, Count: h})
		}
		return out
	}
	cases := []struct {
		prefix, after string
		limit         int
		want          StreamsPage
	}{
		{"", "", 0, StreamsPage{Streams: info("agent/a", "agent/b", "agent/b/child", "agent/c.d", "agents/x", "conversation/p/c", IndexStream(2))}},
		{"agent/", "", 0, StreamsPage{Streams: info("agent/a", "agent/b", "agent/b/child", "agent/c.d")}},
		{"agent", "", 0, StreamsPage{Streams: info("agent/a", "agent/b", "agent/b/child", "agent/c.d", "agents/x")}},
		{"agent/b", "", 0, StreamsPage{Streams: info("agent/b", "agent/b/child")}},
		{"agent/c.", "", 0, StreamsPage{Streams: info("agent/c.d")}},
		{"runtime/agents/", "", 0, StreamsPage{Streams: info(IndexStream(2))}},
		{"nothing/", "", 0, StreamsPage{Streams: info()}},
		{"", "", 2, StreamsPage{Streams: info("agent/a", "agent/b"), Next: "agent/b"}},
		{"", "agent/b", 2, StreamsPage{Streams: info("agent/b/child", "agent/c.d"), Next: "agent/c.d"}},
		{"", "agents/x", 2, StreamsPage{Streams: info("conversation/p/c", IndexStream(2))}},
		{"a//", "", 0, StreamsPage{Streams: info()}}, // no stream starts with it
		{"\x00", "", 0, StreamsPage{Streams: info()}},
	}
	for _, c := range cases {
		got, err := l.Streams(t.Context(), c.prefix, c.after, c.limit)
		if err != nil {
			t.Fatalf("prefix %q after %q: %v", c.prefix, c.after, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("prefix %q after %q limit %d (-want +got):\n%s", c.prefix, c.after, c.limit, diff)
		}
	}

	got, err := l.Stream("agent/a")
	if err != nil || got != info("agent/a")[0] {
		t.Errorf("Stream(agent/a) = %+v, %v; want %+v", got, err, info("agent/a")[0])
	}
	if _, err := l.Stream("agent/none"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Errorf("Stream(agent/none): err = %v, want ErrNotFound", err)
	}
}

func TestStreamOfSubjectReversesSubjectTokens(t *testing.T) {
	for _, name := range []string{"agent/a", "agent/c.d/e-f_g", "dlq", "runtime/agents/3"} {
		got, ok := streamOfSubject(subjectTokens(name))
		if !ok || got != name {
			t.Errorf("streamOfSubject(subjectTokens(%q)) = %q, %v", name, got, ok)
		}
	}
	for _, tokens := range []string{"", "a..b", "a.~b", "a/b", ".a", "a.*", "a.>"} {
		if got, ok := streamOfSubject(tokens); ok {
			t.Errorf("streamOfSubject(%q) = %q, ok; want refused", tokens, got)
		}
	}
}
