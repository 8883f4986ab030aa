package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// benchStepsEnv sets the number of steps of BenchmarkAssistantLoop (the
// issue's figure, 1,000, is the default).
const benchStepsEnv = "JIDO_BENCH_ASSISTANT_STEPS"

const benchDefaultSteps = 1000

// BenchmarkAssistantLoop measures the conversation loop's own cost per
// step, without a model: one user message, then a scripted model of N
// turns, each calling read_file on a small file, then a final text answer.
// One turn of the script is one step of the loop (an LLM call, the answer
// recorded, the loop's decision, the tool run through the project's
// runner, its result recorded, the next decision), and nothing outside
// the node is on that path: no client, no harness, no waiting between
// steps. (1,000 user messages of one tool call each would put the
// client's round trip and the harness's reaction to the turn's end into
// every step; that is the API's cost, not the loop's.)
//
// The same script is then played by the same scripted provider called
// directly, with each request the node made (the context grows by an
// assistant message and a tool result per step, the same way), so the
// difference is what the node adds. Timing comes from hooks around the
// provider and the project's runner (node.Config.Assistant), not from
// event times, which are commit times.
//
// Metrics (µs): node-p50/p99 per step (from one LLM call's start to the
// next's), direct-p50/p99 (the provider's Complete alone), overhead per
// step (mean node − mean direct) and the ratio of the means, and
// tok2tool-p50/p99: from the provider's last token (Complete returning)
// to the tool starting in the runner — the answer, its tool call and
// llm.completed committed, the loop's decision, tool.started committed.
// commit-tok2tool-p50 is the same from the log's commit times
// (llm.completed to tool.started). ns/op and allocs/op are one whole
// conversation through the node (the direct replay is not timed).
//
// "fsync" runs the node as it ships (every commit reaches the disk);
// "nosync" acknowledges commits before they do, which shows the loop's
// CPU cost without the disk's. N is $JIDO_BENCH_ASSISTANT_STEPS (default
// 1000).
func BenchmarkAssistantLoop(b *testing.B) {
	steps := benchDefaultSteps
	if v := os.Getenv(benchStepsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: set it to a number of steps, 1 or more", benchStepsEnv, v)
		}
		steps = n
	}
	// The scripted provider picks its line by the number of assistant
	// messages in the request, and llm_context keeps a window of 200
	// messages: a script longer than about 100 steps never ends (the count
	// stops growing). So the steps are played as conversations of at most
	// benchConvSteps steps, all of them in one op.
	perConv := min(steps, benchConvSteps)
	convs := (steps + perConv - 1) / perConv
	for _, mode := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(mode.name, func(b *testing.B) {
			lb := newLoopBench(b, perConv, mode.noSync)
			var all loopSamples
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range convs {
					all.add(lb.conversation(b, fmt.Sprintf("c%d-%d", i, j)))
				}
			}
			b.StopTimer()
			all.report(b)
		})
	}
}

// benchConvSteps is the most steps of one conversation of
// BenchmarkAssistantLoop: its final request holds the user message and
// 100 answers and results, as many as llm_context's window of 200 keeps.
const benchConvSteps = 100

// TestAssistantLoopBenchHarness runs the benchmark's harness on a short
// script, so `go test` notices when it no longer measures what it says:
// every step sampled, the direct replay answering each request as the
// node's provider did, a tool run per step.
func TestAssistantLoopBenchHarness(t *testing.T) {
	const steps = 5
	lb := newLoopBench(t, steps, true)
	s := lb.conversation(t, "c1")
	if len(s.node) != steps || len(s.direct) != steps || len(s.tok2tool) != steps || len(s.commitTok2tool) != steps {
		t.Fatalf("samples node %d direct %d tok2tool %d commit %d, want %d each", len(s.node), len(s.direct), len(s.tok2tool), len(s.commitTok2tool), steps)
	}
	got := typesOf(convEvents(t, lb.n, "p1/c1"))
	if c := strings.Count(got, "tool.completed"); c != steps {
		t.Fatalf("%d tools completed, want %d: %s", c, steps, got)
	}
	if !strings.HasSuffix(got, "llm.requested assistant.message llm.completed") {
		t.Fatalf("the turn did not end with the final answer: %s", got)
	}
}

// loopBench is a node with one project whose scripted model plays steps
// tool calls and a final answer, and the hooks that time it.
type loopBench struct {
	n      *Node
	steps  int
	rec    *stepRecorder
	direct llm.Provider
}

func newLoopBench(tb testing.TB, steps int, noSync bool) *loopBench {
	tb.Helper()
	root := tb.TempDir()
	var script strings.Builder
	for range steps {
		script.WriteString(`{"tool_calls":[{"name":"read_file","args":{"path":"a.txt"}}],"usage":{"input_tokens":10,"output_tokens":3}}` + "\n")
	}
	script.WriteString(`{"text":"done","usage":{"input_tokens":10,"output_tokens":1}}` + "\n")
	for name, body := range map[string]string{
		"a.txt":              "hello world\n",
		".jido/script.jsonl": script.String(),
		".jido/config.yaml":  "llm:\n  provider: scripted\n  model: demo\n  script: .jido/script.jsonl\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	newProvider := func(s assistant.LLMSettings, root string) (llm.Provider, error) {
		return llm.New(llm.Config{Provider: s.Provider, Model: s.Model, Script: filepath.Join(root, s.Script)}, os.Getenv, nil)
	}
	lb := &loopBench{steps: steps, rec: &stepRecorder{}}
	n, err := Start(context.Background(), Config{
		DataDir: tb.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: noSync,
		Assistant: func(c *assistant.Config) {
			c.Host = timedHost{Host: c.Host, rec: lb.rec}
			c.NewProvider = func(s assistant.LLMSettings, root string) (llm.Provider, error) {
				p, err := newProvider(s, root)
				if err != nil {
					return nil, err
				}
				return timedProvider{p: p, rec: lb.rec}, nil
			}
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	lb.n = n
	tb.Cleanup(func() {
		if err := n.Shutdown(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		tb.Fatal(err)
	}
	if lb.direct, err = newProvider(assistant.LLMSettings{Provider: "scripted", Model: "demo", Script: ".jido/script.jsonl"}, root); err != nil {
		tb.Fatal(err)
	}
	return lb
}

// conversation plays the script once in a new conversation conv of
// project p1, through the node (timed, when tb is a benchmark), then
// directly (not timed), and returns the samples.
func (lb *loopBench) conversation(tb testing.TB, conv string) loopSamples {
	tb.Helper()
	b, isBench := tb.(*testing.B)
	pause := func() {
		if isBench {
			b.StopTimer()
		}
	}
	resume := func() {
		if isBench {
			b.StartTimer()
		}
	}
	pause()
	ctx := context.Background()
	key := "p1/" + conv
	done := lb.rec.reset(lb.steps + 1)
	if _, err := lb.n.Conversations().Start(ctx, convapi.StartRequest{Project: "p1", Conversation: conv,
		Limits: &conversation.Limits{MaxSteps: lb.steps + 1, MaxToolCalls: lb.steps}}); err != nil {
		tb.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"conv": key, "text": "read a.txt, again and again"})
	resume()
	if _, err := lb.n.convSend(ctx, body); err != nil {
		tb.Fatal(err)
	}
	lb.awaitEnd(tb, key, done)
	pause()
	defer resume()

	r := lb.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		tb.Fatalf("the provider failed: %v", r.err)
	}
	if len(r.starts) != lb.steps+1 || len(r.tools) != lb.steps {
		tb.Fatalf("%d LLM calls and %d tool runs, want %d and %d", len(r.starts), len(r.tools), lb.steps+1, lb.steps)
	}
	var s loopSamples
	for k := range lb.steps {
		s.node = append(s.node, r.starts[k+1].Sub(r.starts[k]))
		s.tok2tool = append(s.tok2tool, r.tools[k].Sub(r.ends[k]))
	}
	// The direct replay: request k is the node's last request cut to the
	// messages the node's k-th request had (the context only grows), so
	// the provider sees the same requests and must answer the same.
	for k := range lb.steps {
		req := r.last
		req.Messages = r.last.Messages[:r.msgs[k]]
		start := time.Now()
		resp, err := lb.direct.Complete(ctx, req, func(llm.Delta) {})
		s.direct = append(s.direct, time.Since(start))
		if err != nil {
			tb.Fatalf("direct call %d: %v", k+1, err)
		}
		if got := answerOf(resp); got != r.answers[k] {
			tb.Fatalf("direct call %d answered %s, the node's provider %s: the replay is not the same requests", k+1, got, r.answers[k])
		}
	}
	s.commitTok2tool = commitTok2Tool(tb, lb.n, key)
	return s
}

// awaitEnd waits until the final answer's llm.completed is committed:
// first for the provider's last call (done), then reading the stream's
// last entries. A turn that ends early (a limit, a failure) is reported
// with its reason.
func (lb *loopBench) awaitEnd(tb testing.TB, key string, done <-chan struct{}) {
	tb.Helper()
	stream := conversation.Stream(key)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var seen uint64
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-ctx.Done():
			tb.Fatalf("%s did not finish its %d steps in time; last events: %s", key, lb.steps, typesOf(streamEvents(tb, lb.n, key)))
		case <-tick.C:
			// A failed turn stops calling the provider: look for why.
			for e, err := range lb.n.Log().ReadStream(stream, eventlog.ReadOptions{From: seen + 1}) {
				if err != nil {
					tb.Fatal(err)
				}
				seen = e.Seq
				if e.Event.Type() == conversation.LLMFailed {
					tb.Fatalf("%s: the turn failed: %s", key, e.Event.Data())
				}
			}
		}
	}
	info, err := lb.n.Log().Stream(stream)
	if err != nil {
		tb.Fatal(err)
	}
	sub, err := lb.n.Log().Subscribe(eventlog.SubscribeOptions{Stream: stream, From: max(1, info.Head-8), Types: "conversation.llm.*"})
	if err != nil {
		tb.Fatal(err)
	}
	defer sub.Close()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			tb.Fatalf("%s: waiting for the final answer: %v", key, err)
		}
		switch e.Event.Type() {
		case conversation.LLMFailed:
			tb.Fatalf("%s: the turn failed: %s", key, e.Event.Data())
		case conversation.LLMCompleted:
			var d struct {
				ToolCalls int `json:"tool_calls"`
			}
			if json.Unmarshal(e.Event.Data(), &d) == nil && d.ToolCalls == 0 {
				return
			}
		}
	}
}

// commitTok2Tool returns, per step, the time between the commits of
// llm.completed and of the tool.started its tool call caused.
func commitTok2Tool(tb testing.TB, n *Node, key string) []time.Duration {
	tb.Helper()
	completed := map[string]time.Time{} // request id → commit time
	callOf := map[string]string{}       // call id → request id
	var out []time.Duration
	for _, e := range streamEvents(tb, n, key) {
		causation := conversation.CausationID(e.Event)
		switch e.Event.Type() {
		case conversation.ToolRequested:
			var d struct {
				CallID string `json:"call_id"`
			}
			if err := json.Unmarshal(e.Event.Data(), &d); err != nil {
				tb.Fatal(err)
			}
			callOf[d.CallID] = causation
		case conversation.LLMCompleted:
			completed[causation] = e.Time
		case conversation.ToolStarted:
			at, ok := completed[callOf[causation]]
			if !ok {
				tb.Fatalf("%s: tool.started %s before its llm.completed", key, e.Event.ID())
			}
			out = append(out, e.Time.Sub(at))
		}
	}
	return out
}

// streamEvents is convEvents for a benchmark as well as a test.
func streamEvents(tb testing.TB, n *Node, key string) []eventlog.Entry {
	tb.Helper()
	var out []eventlog.Entry
	for e, err := range n.Log().ReadStream(conversation.Stream(key), eventlog.ReadOptions{Types: conversation.TypePattern}) {
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func answerOf(r llm.Response) string {
	if len(r.ToolCalls) > 0 {
		return r.ToolCalls[0].ID + " " + r.ToolCalls[0].Name
	}
	return "text " + r.Text
}

// stepRecorder takes the times of one conversation's provider calls and
// tool runs; the loop makes them one after the other.
type stepRecorder struct {
	mu      sync.Mutex
	want    int // provider calls in the script
	done    chan struct{}
	starts  []time.Time // each provider call's start
	ends    []time.Time // … and return (its last token)
	msgs    []int       // … and the number of messages of its request
	answers []string
	last    llm.Request // the last tool step's request; the others are prefixes of it
	tools   []time.Time // each tool run's start in the runner
	err     error
}

func (r *stepRecorder) reset(want int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want, r.done, r.err = want, make(chan struct{}), nil
	r.starts, r.ends, r.msgs, r.answers, r.tools = nil, nil, nil, nil, nil
	r.last = llm.Request{}
	return r.done
}

type timedProvider struct {
	p   llm.Provider
	rec *stepRecorder
}

func (t timedProvider) Complete(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	start := time.Now()
	resp, err := t.p.Complete(ctx, req, onDelta)
	end := time.Now()
	r := t.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return resp, err
	}
	r.starts = append(r.starts, start)
	r.ends = append(r.ends, end)
	r.msgs = append(r.msgs, len(req.Messages))
	r.answers = append(r.answers, answerOf(resp))
	if len(resp.ToolCalls) > 0 {
		// The final answer's request may have lost its oldest messages to
		// the window; the last tool step's holds every step's before it.
		r.last = req
	}
	if len(r.starts) == r.want {
		close(r.done)
	}
	return resp, err
}

// timedHost takes the time a tool call enters the project's runner.
type timedHost struct {
	assistant.Host
	rec *stepRecorder
}

func (h timedHost) CallTool(ctx context.Context, project string, call tools.ToolCall) (tools.Result, error) {
	at := time.Now()
	h.rec.mu.Lock()
	h.rec.tools = append(h.rec.tools, at)
	h.rec.mu.Unlock()
	return h.Host.CallTool(ctx, project, call)
}

// loopSamples are the per-step durations of one or more conversations.
type loopSamples struct {
	node, direct, tok2tool, commitTok2tool []time.Duration
}

func (s *loopSamples) add(o loopSamples) {
	s.node = append(s.node, o.node...)
	s.direct = append(s.direct, o.direct...)
	s.tok2tool = append(s.tok2tool, o.tok2tool...)
	s.commitTok2tool = append(s.commitTok2tool, o.commitTok2tool...)
}

func (s loopSamples) report(b *testing.B) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	nodeMean, directMean := mean(s.node), mean(s.direct)
	b.ReportMetric(us(quantile(s.node, 0.50)), "node-p50-us/step")
	b.ReportMetric(us(quantile(s.node, 0.99)), "node-p99-us/step")
	b.ReportMetric(us(quantile(s.direct, 0.50)), "direct-p50-us/step")
	b.ReportMetric(us(quantile(s.direct, 0.99)), "direct-p99-us/step")
	b.ReportMetric(us(nodeMean-directMean), "overhead-us/step")
	if directMean > 0 {
		b.ReportMetric(float64(nodeMean)/float64(directMean), "node/direct")
	}
	b.ReportMetric(us(quantile(s.tok2tool, 0.50)), "tok2tool-p50-us")
	b.ReportMetric(us(quantile(s.tok2tool, 0.99)), "tok2tool-p99-us")
	b.ReportMetric(us(quantile(s.commitTok2tool, 0.50)), "commit-tok2tool-p50-us")
	b.ReportMetric(float64(len(s.node))/float64(b.N), "steps")
}

// quantile returns the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}
