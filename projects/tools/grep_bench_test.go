package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// grepTree writes a source tree of about 50 MB under dir: 2,000 files of
// ~25 KB of Go-like text in 40 folders, one line in every hundredth file
// holding the needle, so the matches stay far below grep's caps and both
// tools read everything.
func grepTree(b *testing.B, dir string) (files int, bytes int64) {
	b.Helper()
	var body strings.Builder
	for i := range 360 {
		fmt.Fprintf(&body, "func f%d(x int) int { return x*%d + len(\"some text here\") } // line\n", i, i)
	}
	text := body.String()
	for i := range 2000 {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		content := text
		if i%100 == 0 {
			content += "// NEEDLE_7f3a: found it\n"
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.go", i)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		files++
		bytes += int64(len(content))
	}
	return files, bytes
}

// BenchmarkGrep runs the grep tool through Runner.Run over a 50 MB tree
// against ripgrep (rg, when installed: Debian's ripgrep) on the same tree
// in the same run; each reports the tree's bytes per second.
func BenchmarkGrep(b *testing.B) {
	f := newFixture(b, nil, nil, Options{})
	_, size := grepTree(b, f.dir)
	args := json.RawMessage(`{"pattern":"NEEDLE_7f3a"}`)
	b.Run("Runner.Run", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			res, err := f.runner.Run(context.Background(), ToolCall{ID: "g", Name: "grep", Args: args})
			if err != nil {
				b.Fatal(err)
			}
			if !strings.Contains(string(res.Data), "found it") {
				b.Fatalf("no match: %.200s", res.Data)
			}
		}
	})
	b.Run("ripgrep", func(b *testing.B) {
		rg, err := exec.LookPath("rg")
		if err != nil {
			b.Skip("rg is not installed (Debian: apt-get install ripgrep); nothing to compare with")
		}
		b.SetBytes(size)
		for b.Loop() {
			out, err := exec.Command(rg, "-n", "NEEDLE_7f3a", f.dir).Output()
			if err != nil || !strings.Contains(string(out), "found it") {
				b.Fatalf("rg: %v %.200s", err, out)
			}
		}
	})
}
