package mcp_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	mcpgw "github.com/jido-bus/jido-bus/projects/gateway/mcp"
)

// BenchmarkToolCallStdio is one MCP tools/call end to end, as the peer
// benchmark (../shared/peers/mcp-filesystem) makes it of `jido-bus mcp
// --project`: a go-sdk client on the stdio transport (in-memory pipes
// here), the gateway, the engine's runner and the project's log with its
// default fsync, for read_file of a 4 KiB file and list_dir of 50
// entries, by 1 and by 8 callers on one session. Besides ns/op it reports
// the p50 and p99 of single calls and the log's growth per call (bytes of
// the data dir). Profile it with -cpuprofile to see where a call's CPU
// goes (docs/performance.md).
func BenchmarkToolCallStdio(b *testing.B) {
	for _, op := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"read4k", "read_file", map[string]any{"path": "file4k.txt"}},
		{"list50", "list_dir", map[string]any{"path": "dir50"}},
	} {
		for _, callers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/callers=%d", op.name, callers), func(b *testing.B) {
				benchStdio(b, op.tool, op.args, callers)
			})
		}
	}
}

func benchStdio(b *testing.B, tool string, args map[string]any, callers int) {
	ctx := context.Background()
	data := b.TempDir()
	n, err := node.Start(ctx, node.Config{
		DataDir:  data,
		NATS:     node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) { c.NoWatch = true },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := n.Shutdown(context.Background()); err != nil {
			b.Errorf("close node: %v", err)
		}
	}()
	root := b.TempDir()
	files := map[string]string{"file4k.txt": strings.Repeat("abcdefghijklmnopqrstuvwxyz789012345678901234567890123456789012\n", 64)}
	for i := range 50 {
		files[fmt.Sprintf("dir50/f%02d.txt", i)] = "x\n"
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: "bench"}); err != nil {
		b.Fatal(err)
	}
	g := mcpgw.New(n.MCPHost(), mcpgw.Options{Version: "bench"})
	defer g.Close()
	sctx, stop := context.WithCancel(ctx)
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- g.ServeStdio(sctx, "bench", sr, sw); sw.Close() }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // the peer benchmark's
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		stop()
		<-served
	}()
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	call := func() time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", tool, err, res)
		}
		return time.Since(t0)
	}
	for range 50 { // warm up: the first calls compile schemas, fill pools
		call()
	}
	before := dirBytes(b, data)
	b.ReportAllocs()
	b.ResetTimer()
	lat := make([][]time.Duration, callers)
	var wg sync.WaitGroup
	next := make(chan struct{})
	go func() {
		defer close(next)
		for b.Loop() {
			next <- struct{}{}
		}
	}()
	for i := range callers {
		wg.Go(func() {
			for range next {
				lat[i] = append(lat[i], call())
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[min(len(all)-1, len(all)*99/100)].Microseconds()), "p99-µs")
	b.ReportMetric(float64(dirBytes(b, data)-before)/float64(len(all)), "log-B/call")
}

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
