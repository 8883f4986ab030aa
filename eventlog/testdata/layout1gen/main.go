// Command layout1gen wrote testdata/layout1, the fixture data directory in
// key layout 1 (each entry stored under its stream key and its global key)
// that the layout-2 upgrade is tested on. It was run with the eventlog
// package of commit 54c9658, the last to write layout 1:
//
//	go run ./eventlog/testdata/layout1gen eventlog/testdata/layout1
//
// Run with a later build it writes the current layout instead, so the
// fixture is committed, never regenerated.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

func sig(typ, id string, n int) bus.Signal {
	s, err := bus.NewSignal(typ, "test/source", map[string]any{"id": id, "n": n})
	if err != nil {
		panic(err)
	}
	s.SetID(id)
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, n, time.UTC))
	return s
}

func cmd(signal string, version uint64) bus.Signal {
	s := bus.Signal{}
	s.SetSpecVersion(bus.SpecVersion)
	s.SetType("jido.agent.cmd")
	s.SetID("cmd:test/source#" + signal)
	s.SetSource("jido-bus:runtime")
	s.SetTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	_ = bus.SetJSONData(&s, []byte(fmt.Sprintf(`{"signal":%q,"version":%d,"directives":[]}`, signal, version)))
	return s
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: layout1gen DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "layout1gen:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	ctx := context.Background()
	l, err := eventlog.Open(dir, eventlog.Options{})
	if err != nil {
		return err
	}
	// Three agents take signals in turn, each signal followed by its cmd
	// record in the same append, so the streams interleave in the global
	// order as a node's do.
	for i := 1; i <= 6; i++ {
		for _, a := range []string{"agent/a", "agent/b", "agent/c"} {
			id := fmt.Sprintf("%s-s%d", a, i)
			if _, err := l.Append(ctx, a, eventlog.AnyVersion, sig("user.said", id, i), cmd(id, uint64(2*i))); err != nil {
				return err
			}
		}
	}
	// One append over two streams, and a re-sent event (a duplicate: not
	// written again).
	if _, err := l.AppendMulti(ctx, []eventlog.StreamAppend{
		{Stream: "project/p", Expected: eventlog.NoStream, Events: []bus.Signal{sig("project.created", "p1", 1)}},
		{Stream: "conversation/p/c1", Expected: eventlog.NoStream, Events: []bus.Signal{sig("turn.started", "t1", 1), sig("turn.ended", "t2", 2)}},
	}); err != nil {
		return err
	}
	if res, err := l.Append(ctx, "agent/a", eventlog.AnyVersion, sig("user.said", "agent/a-s1", 1)); err != nil || !res.Positions[0].Duplicate {
		return fmt.Errorf("re-sent event: %v %+v", err, res)
	}
	if err := l.SaveSnapshot(ctx, "agent/a", 8, []byte(`{"count":4}`)); err != nil {
		return err
	}
	if n, err := l.TruncateBefore(ctx, "agent/b", 5); err != nil || n != 4 {
		return fmt.Errorf("truncate: %d %v", n, err)
	}
	if n, err := l.DeleteStream(ctx, "agent/c"); err != nil || n != 12 {
		return fmt.Errorf("delete: %d %v", n, err)
	}
	// Reopening flushes what the write-ahead log holds into a table, so
	// the fixture has both: the entries above in a table, the last one
	// only in the log.
	if err := l.Close(); err != nil {
		return err
	}
	if l, err = eventlog.Open(dir, eventlog.Options{}); err != nil {
		return err
	}
	if _, err := l.Append(ctx, "agent/b", eventlog.AnyVersion, sig("user.said", "agent/b-s7", 7), cmd("agent/b-s7", 14)); err != nil {
		return err
	}
	return l.Close()
}
