package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/frontdoor"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// BenchmarkToolCallMCPvsNATS compares one tools/call of read_file (a
// 4 KiB file) through the MCP gateway over streamable HTTP with the same
// call on the NATS project API (jido.api.project.tool.call), against the
// same node and project in the same run:
//
//   - mcp_http: the go-sdk client, one session on <http>/mcp/p1 through
//     the front door (bearer token), CallTool per op. Each call commits
//     project.tool.started, project.tool.completed and the gateway's
//     project.gateway.request before it answers.
//   - nats_api: one nats.Conn request per op, the reply decoded. Each
//     call commits project.tool.started and project.tool.completed.
//   - both: one MCP call and one NATS call per op, in alternating order,
//     so the two are measured under the same conditions at the same
//     moment; it reports the ratios mcp/nats (of the means) and
//     mcp/nats-p50 (of the medians). ns/op is the sum of the two calls.
//
// Every op checks that the content read is the file's, so a broken path
// fails the benchmark instead of timing errors. p50/p99 are per call (µs).
// "fsync" is the node as it ships (each commit reaches the disk);
// "nosync" acknowledges commits before they do.
func BenchmarkToolCallMCPvsNATS(b *testing.B) {
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			gb := newGatewayBench(b, mode.noSync)
			b.Run("mcp_http", func(b *testing.B) { gb.run(b, gb.mcpRead) })
			b.Run("nats_api", func(b *testing.B) { gb.run(b, gb.natsRead) })
			b.Run("both", gb.runBoth)
		})
	}
}

// TestToolCallBenchHarness runs the benchmark's calls a few times, so
// `go test` notices when they no longer measure what the benchmark says:
// both return the file's content, a failed call is an error (not an
// empty read), and the log holds a tool call per call and a gateway
// record per MCP call.
func TestToolCallBenchHarness(t *testing.T) {
	gb := newGatewayBench(t, true)
	const calls = 3
	for range calls {
		for name, read := range map[string]func(context.Context, string) (string, error){"mcp": gb.mcpRead, "nats": gb.natsRead} {
			got, err := read(context.Background(), benchFile)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got != gb.want {
				t.Fatalf("%s read %d bytes %.40q…, want the file's %d bytes", name, len(got), got, len(gb.want))
			}
		}
	}
	for name, read := range map[string]func(context.Context, string) (string, error){"mcp": gb.mcpRead, "nats": gb.natsRead} {
		if got, err := read(context.Background(), "../outside.txt"); err == nil || !strings.Contains(err.Error(), "outside_root") {
			t.Fatalf("%s: a path escape gave %.40q, %v; want an outside_root error", name, got, err)
		}
	}
	counts := map[string]int{}
	for e, err := range gb.n.Log().ReadStream(projects.Stream("p1"), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		counts[e.Event.Type()]++
	}
	if counts[projects.TypeToolCompleted] != 2*calls || counts[projects.TypeToolFailed] != 2 || counts[projects.TypeGatewayRequest] != calls+1 {
		t.Fatalf("the project's stream holds %v; want %d %s, 2 %s and %d %s", counts,
			2*calls, projects.TypeToolCompleted, projects.TypeToolFailed, calls+1, projects.TypeGatewayRequest)
	}
}

// benchFile is the file read, 4 KiB of text in 64 lines.
const benchFile = "data.txt"

// gatewayBench is a node serving HTTP and NATS with project p1 open, an
// MCP session and a NATS connection to it.
type gatewayBench struct {
	n    *Node
	want string // benchFile's content
	cs   *sdk.ClientSession
	nc   *nats.Conn
}

func newGatewayBench(tb testing.TB, noSync bool) *gatewayBench {
	tb.Helper()
	const token = "bench-token-0123456789"
	var content strings.Builder
	for i := range 64 {
		line := fmt.Sprintf("line %02d ", i)
		content.WriteString(line + strings.Repeat("abcdefgh", 7)[:63-len(line)] + "\n")
	}
	gb := &gatewayBench{want: content.String()}
	if len(gb.want) != 4096 {
		tb.Fatalf("the file is %d bytes, want 4096", len(gb.want))
	}
	root := tb.TempDir()
	if err := os.WriteFile(filepath.Join(root, benchFile), []byte(gb.want), 0o644); err != nil {
		tb.Fatal(err)
	}
	n, err := Start(context.Background(), Config{
		DataDir: tb.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: noSync,
		HTTP: HTTPConfig{Listen: "127.0.0.1:0", Options: frontdoor.Options{Tokens: map[string]string{token: "bench"}}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	gb.n = n
	tb.Cleanup(func() {
		if err := n.Shutdown(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		tb.Fatal(err)
	}

	// Cleanups run last in, first out: the session and the connections
	// close before the node does.
	transport := &http.Transport{}
	tb.Cleanup(transport.CloseIdleConnections)
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	gb.cs, err = client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: n.HTTPURL() + "/mcp/p1", HTTPClient: &http.Client{Transport: bearer{token, transport}},
	}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = gb.cs.Close() })
	if gb.nc, err = nats.Connect(n.URL()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(gb.nc.Close)
	return gb
}

// bearer adds the front door's token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpRead calls read_file on path through the MCP session and returns
// the content of its structured result.
func (gb *gatewayBench) mcpRead(ctx context.Context, path string) (string, error) {
	res, err := gb.cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": path}})
	if err != nil {
		return "", err
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				text = tc.Text
			}
		}
		return "", errors.New("isError: " + text)
	}
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		return "", fmt.Errorf("structuredContent is %T, want an object", res.StructuredContent)
	}
	s, ok := m["content"].(string)
	if !ok {
		return "", fmt.Errorf("structuredContent has no content string: %v", m)
	}
	return s, nil
}

// natsReply is tool.call's reply as a client decodes it.
type natsReply struct {
	OK    bool `json:"ok"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Data struct {
		Content string `json:"content"`
	} `json:"data"`
}

// natsRead calls read_file on path with a request on the NATS project
// API and returns the content of its reply.
func (gb *gatewayBench) natsRead(ctx context.Context, path string) (string, error) {
	args, err := json.Marshal(map[string]string{"path": path})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(projectapi.ToolCallRequest{Project: "p1", Name: "read_file", Args: args})
	if err != nil {
		return "", err
	}
	msg, err := gb.nc.RequestWithContext(ctx, "jido.api.project.tool.call", body)
	if err != nil {
		return "", err
	}
	var r natsReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return "", fmt.Errorf("reply %.200s: %w", msg.Data, err)
	}
	if !r.OK {
		if r.Error == nil {
			return "", fmt.Errorf("reply %.200s: not ok and no error", msg.Data)
		}
		return "", fmt.Errorf("%s: %s", r.Error.Type, r.Error.Message)
	}
	return r.Data.Content, nil
}

// call times one read and checks its content.
func (gb *gatewayBench) call(b *testing.B, ctx context.Context, name string, read func(context.Context, string) (string, error)) time.Duration {
	start := time.Now()
	got, err := read(ctx, benchFile)
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	if got != gb.want {
		b.Fatalf("%s read %d bytes %.40q…, want the file's %d bytes", name, len(got), got, len(gb.want))
	}
	return d
}

// run times b.N calls of read and reports their p50 and p99.
func (gb *gatewayBench) run(b *testing.B, read func(context.Context, string) (string, error)) {
	ctx := context.Background()
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ds = append(ds, gb.call(b, ctx, b.Name(), read))
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(quantile(ds, 0.50)), "p50-us")
	b.ReportMetric(us(quantile(ds, 0.99)), "p99-us")
}

// runBoth makes one MCP call and one NATS call per op, alternating which
// goes first, and reports each one's quantiles and the ratios.
func (gb *gatewayBench) runBoth(b *testing.B) {
	ctx := context.Background()
	mcp := make([]time.Duration, 0, b.N)
	nc := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			mcp = append(mcp, gb.call(b, ctx, "mcp", gb.mcpRead))
			nc = append(nc, gb.call(b, ctx, "nats", gb.natsRead))
		} else {
			nc = append(nc, gb.call(b, ctx, "nats", gb.natsRead))
			mcp = append(mcp, gb.call(b, ctx, "mcp", gb.mcpRead))
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(quantile(mcp, 0.50)), "mcp-p50-us")
	b.ReportMetric(us(quantile(mcp, 0.99)), "mcp-p99-us")
	b.ReportMetric(us(quantile(nc, 0.50)), "nats-p50-us")
	b.ReportMetric(us(quantile(nc, 0.99)), "nats-p99-us")
	if m := mean(nc); m > 0 {
		b.ReportMetric(float64(mean(mcp))/float64(m), "mcp/nats")
	}
	if p := quantile(nc, 0.50); p > 0 {
		b.ReportMetric(float64(quantile(mcp, 0.50))/float64(p), "mcp/nats-p50")
	}
}
