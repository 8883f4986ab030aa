package projects_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// BenchmarkToolCallThroughEngine measures what the engine adds to one tool
// call: read_file of a 4 KiB file through Engine.CallTool (the runner plus
// two entries committed to the project's stream, project.tool.started
// before the read and project.tool.completed after it) against a runner
// over the same root, policy and built-ins with no observer, in the same
// run. "sync" is the node's default (each commit fsync'd), "nosync" shows
// the cost without the disk. Besides ns/op and allocs it reports the p50
// and p99 latency of single calls.
func BenchmarkToolCallThroughEngine(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat("abcdefghijklmno\n", 256)), 0o644); err != nil {
		b.Fatal(err)
	}
	call := tools.ToolCall{ID: "c", Name: "read_file", Args: json.RawMessage(`{"path":"f.txt"}`)}
	ctx := context.Background()

	b.Run("Runner.Run", func(b *testing.B) {
		root, err := policy.OpenRoot(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer root.Close()
		cat, err := tools.NewCatalog(tools.Builtins(tools.Limits{})...)
		if err != nil {
			b.Fatal(err)
		}
		r, err := tools.NewRunner(tools.Options{Sandbox: &policy.Sandbox{Root: root, Policy: policy.Default()}, Catalog: cat})
		if err != nil {
			b.Fatal(err)
		}
		latencies(b, func() error {
			_, err := r.Run(ctx, call)
			return err
		})
	})
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"Engine.CallTool/sync", false}, {"Engine.CallTool/nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			n, err := node.Start(ctx, node.Config{
				DataDir: b.TempDir(), NoSync: mode.noSync,
				NATS:     node.NATSConfig{DontListen: true},
				Projects: func(c *projects.Config) { c.NoWatch = true },
			})
			if err != nil {
				b.Fatal(err)
			}
			defer n.Shutdown(context.Background())
			info, err := n.Projects().Open(ctx, projects.OpenRequest{Root: dir, ID: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			calls := latencies(b, func() error {
				_, err := n.Projects().CallTool(ctx, info.ID, call)
				return err
			})
			// Every call left its two entries: the benchmark measured what
			// it says it did.
			got := 0
			for e, err := range n.Log().ReadStream(projects.Stream(info.ID), eventlog.ReadOptions{}) {
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(e.Event.Type(), "project.tool.") {
					got++
				}
			}
			if got != 2*calls {
				b.Fatalf("%d calls left %d project.tool.* entries, want %d", calls, got, 2*calls)
			}
			if err := n.Projects().CloseProject(ctx, info.ID, "benchmark done"); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// latencies runs fn in b.Loop, timing each call, reports the p50 and p99
// (in ns) and returns how many calls it made.
func latencies(b *testing.B, fn func() error) int {
	b.Helper()
	b.ReportAllocs()
	var ds []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(ds[min(len(ds)-1, len(ds)*99/100)].Nanoseconds()), "p99-ns")
	return len(ds)
}
