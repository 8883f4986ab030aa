package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadFile compares read_file through Runner.Run (schema check,
// policy, slot, timeout context, Sandbox resolve, JSON output, observer)
// with os.ReadFile of the same 4 KiB file; the difference is the runner's
// overhead (goal: under 50 µs). The built-ins run inline (Tool.HonoursContext):
// measured on the shared 2-core machine, about 18–35 µs added, down from
// 30–50 µs with a watchdog goroutine per call.
func BenchmarkReadFile(b *testing.B) {
	f := newFixture(b, map[string]string{"f.txt": strings.Repeat("abcdefghijklmno\n", 256)}, nil, Options{})
	args := json.RawMessage(`{"path":"f.txt"}`)
	b.Run("os.ReadFile", func(b *testing.B) {
		p := filepath.Join(f.dir, "f.txt")
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Sandbox.ReadFile", func(b *testing.B) {
		sb := f.runner.Sandbox()
		for b.Loop() {
			if _, err := sb.ReadFile("read_file", "f.txt", 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Runner.Run", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.runner.Run(context.Background(), ToolCall{ID: "x", Name: "read_file", Args: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
