package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// reply is what the fake model server answers.
type reply struct {
	status int
	header map[string]string
	body   string // an error answer's body (status != 200)
	file   string // testdata SSE recording to stream
	// after sending this many events (0: all of them):
	upTo int
	// cut closes the connection without ending the HTTP response; block
	// waits for the client to go away; otherwise the response ends cleanly.
	cut, block bool
}

// fakeServer streams recorded SSE the way the real APIs do, one flushed
// event at a time, and remembers what it was asked.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
}

func newFakeServer(t *testing.T, r reply) *fakeServer {
	t.Helper()
	var events []string
	if r.file != "" {
		data, err := os.ReadFile("testdata/" + r.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range strings.SplitAfter(string(data), "\n\n") {
			if strings.TrimSpace(ev) != "" {
				events = append(events, ev)
			}
		}
		if r.upTo > 0 {
			events = events[:r.upTo]
		}
	}
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		fs.mu.Lock()
		fs.requests = append(fs.requests, req)
		fs.bodies = append(fs.bodies, string(body))
		fs.mu.Unlock()
		for k, v := range r.header {
			w.Header().Set(k, v)
		}
		if r.status != 0 && r.status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(r.status)
			_, _ = io.WriteString(w, r.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		flusher := w.(http.Flusher)
		flusher.Flush()
		for _, ev := range events {
			if _, err := io.WriteString(w, ev); err != nil {
				return
			}
			flusher.Flush()
		}
		switch {
		case r.cut:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		case r.block:
			<-req.Context().Done()
		}
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) count() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.requests)
}

func (fs *fakeServer) last() (*http.Request, string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.requests[len(fs.requests)-1], fs.bodies[len(fs.bodies)-1]
}

// collect gathers the deltas of one Complete call.
type collect struct {
	text  strings.Builder
	texts int
	args  map[int]string
	ids   map[int]string
	names map[int]string
}

func (c *collect) on(d Delta) {
	if c.args == nil {
		c.args, c.ids, c.names = map[int]string{}, map[int]string{}, map[int]string{}
	}
	if d.IsText() {
		c.text.WriteString(d.Text)
		c.texts++
		return
	}
	c.args[d.ToolCallIndex] += d.ArgsPiece
	if d.ToolCallID != "" {
		c.ids[d.ToolCallIndex] = d.ToolCallID
	}
	if d.ToolName != "" {
		c.names[d.ToolCallIndex] = d.ToolName
	}
}
