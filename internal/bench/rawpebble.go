package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// rawWriters is the number of goroutines committing raw batches: two, so
// that one batch is written while the previous one syncs, as the log's
// group commit overlaps sequencing a group with syncing the one before.
const rawWriters = 2

// rawPebble writes cfg.Msgs values (each a copy of value) to a fresh Pebble
// database in dir, batch values per batch, each batch committed with
// pebble.Sync: the rate the disk allows for these bytes in these groups.
func rawPebble(ctx context.Context, env *Env, dir string, value []byte, batch int) (flowResult, error) {
	cfg := env.Config
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		return flowResult{}, fmt.Errorf("open pebble in %s: %w", dir, err)
	}
	defer db.Close()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()

	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		errs       [rawWriters]error
	)
	total := int64(cfg.Msgs)
	stop := env.step(MetricRawPebble, total, done.Load)
	start := time.Now()
	for w := range rawWriters {
		wg.Go(func() {
			var key [8]byte
			for ctx.Err() == nil {
				first := next.Add(int64(batch)) - int64(batch)
				if first >= total {
					return
				}
				last := min(first+int64(batch), total)
				b := db.NewBatch()
				for i := first; i < last; i++ {
					binary.BigEndian.PutUint64(key[:], uint64(i))
					if err := b.Set(key[:], value, nil); err != nil {
						b.Close()
						errs[w] = fmt.Errorf("set: %w", err)
						return
					}
				}
				if err := b.Commit(pebble.Sync); err != nil {
					b.Close()
					errs[w] = fmt.Errorf("commit a synced batch: %w", err)
					return
				}
				b.Close()
				done.Add(last - first)
			}
		})
	}
	wg.Wait()
	res := flowResult{Sent: done.Load(), Done: done.Load(), Elapsed: time.Since(start)}
	stop()
	res.Capped = res.Done < total
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	if err := parent.Err(); err != nil {
		return res, fmt.Errorf("stopped after %d of %d: %w", res.Done, total, err)
	}
	return res, nil
}

// quietPebble drops Pebble's informational messages and keeps its errors
// out of the benchmark's output; a failing write still returns its error.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// rawSyncLatencies commits cfg.Calls batches of two values (a call's
// signal and its decision) to a fresh Pebble database in dir, one after
// the other with pebble.Sync, and records each commit in µs: the latency
// floor of a durable call on this disk.
func rawSyncLatencies(ctx context.Context, env *Env, dir string, value []byte) (latencyRun, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		return latencyRun{}, fmt.Errorf("open pebble in %s: %w", dir, err)
	}
	defer db.Close()
	var key [8]byte
	return timeEach(ctx, env, MetricRawSyncPrefix+"latency", func(_ context.Context, i int, warmUp bool) error {
		if warmUp {
			i = -1 - i // keys of their own
		}
		b := db.NewBatch()
		defer b.Close()
		for k := range 2 {
			binary.BigEndian.PutUint64(key[:], uint64(2*i+k))
			if err := b.Set(key[:], value, nil); err != nil {
				return fmt.Errorf("set: %w", err)
			}
		}
		return b.Commit(pebble.Sync)
	})
}
