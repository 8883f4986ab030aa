package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jido-bus/jido-bus/bus"
	"pgregory.net/rapid"
)

// TestConcurrentExpectedVersions: appenders race on one stream, each
// reading the version and appending with it as the expectation. Exactly one
// append wins each version, and the stream ends gapless with every won
// event once.
func TestConcurrentExpectedVersions(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		writers := rapid.IntRange(2, 6).Draw(rt, "writers")
		wins := rapid.IntRange(1, 8).Draw(rt, "wins per writer")
		batch := rapid.IntRange(1, 3).Draw(rt, "events per append")
		l, err := Open("db", Options{FS: vfs.NewMem()})
		if err != nil {
			rt.Fatal(err)
		}
		defer l.Close()

		type win struct {
			writer  int
			version uint64 // the version the append started from
			res     AppendResult
		}
		var (
			mu   sync.Mutex
			won  []win
			errs []error
			wg   sync.WaitGroup
		)
		for w := range writers {
			wg.Go(func() {
				for n := 0; n < wins; {
					info, err := l.Stream("agent/race")
					if err != nil && !errors.Is(err, ErrNotFound) {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					events := make([]bus.Signal, batch)
					for i := range events {
						events[i] = sig("t.x", fmt.Sprintf("w%d-n%d-e%d", w, n, i))
					}
					res, err := l.Append(context.Background(), "agent/race", ExactVersion(info.Head), events...)
					if errors.Is(err, ErrWrongVersion) {
						continue // lost the race for this version; read again
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						won = append(won, win{writer: w, version: info.Head, res: res})
					}
					mu.Unlock()
					if err != nil {
						return
					}
					n++
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			rt.Fatalf("append errors: %v", errs)
		}
		byVersion := make(map[uint64]int)
		for _, wn := range won {
			byVersion[wn.version]++
			for i, p := range wn.res.Positions {
				if p.Duplicate || p.Seq != wn.version+uint64(i)+1 {
					rt.Fatalf("writer %d from version %d got position %+v at %d", wn.writer, wn.version, p, i)
				}
			}
		}
		for v, n := range byVersion {
			if n != 1 {
				rt.Fatalf("version %d won %d times", v, n)
			}
		}
		total := writers * wins * batch
		seen := make(map[string]bool)
		i := 0
		for e, err := range l.ReadStream("agent/race", ReadOptions{}) {
			if err != nil {
				rt.Fatal(err)
			}
			i++
			if e.Seq != uint64(i) {
				rt.Fatalf("entry %d has seq %d", i, e.Seq)
			}
			if seen[e.Event.ID()] {
				rt.Fatalf("event %s stored twice", e.Event.ID())
			}
			seen[e.Event.ID()] = true
		}
		if i != total || len(won) != writers*wins {
			rt.Fatalf("%d entries and %d wins, want %d and %d", i, len(won), total, writers*wins)
		}
	})
}
