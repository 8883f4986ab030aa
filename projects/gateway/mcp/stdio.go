package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdio's transport ends the session at a line that is not JSON; a
// client's typo must not end the server. lineFilter passes on the lines
// that are JSON and answers each other one itself with a JSON-RPC parse
// error (id null), the way an HTTP server answers a malformed body.
//
// At the end of its input it waits until every request it passed on has
// been answered (or done closes) before it reports the end: the SDK ends
// the session at EOF and drops the answers still being made, so
// `printf '…' | jido-bus mcp` (a client that writes its requests and
// closes stdin) got nothing back.
type lineFilter struct {
	r    *bufio.Reader
	out  *lockedWriter
	rest []byte // of the line being passed on
	done <-chan struct{}
}

// maxStdioLine bounds one line (one JSON-RPC message) read from stdin.
const maxStdioLine = 16 << 20

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		line, err := f.line()
		if len(bytes.TrimSpace(line)) > 0 {
			if msg, derr := peekMessage(bytes.TrimSpace(line)); derr == nil {
				if msg.request && msg.id.IsValid() {
					f.out.asked(msg.id)
				}
				f.rest = line
			} else {
				f.parseError(derr)
			}
		}
		if err != nil && len(f.rest) == 0 {
			f.out.waitAnswered(f.done)
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// line reads one line with its newline; a line over maxStdioLine is
// skipped whole and returned as "!" (not JSON).
func (f *lineFilter) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxStdioLine {
			buf = append(buf, chunk...)
		} else {
			buf = []byte("! (longer than 16 MiB)")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(buf) > 0 && buf[len(buf)-1] != '\n' && err == nil {
			buf = append(buf, '\n')
		}
		return buf, err
	}
}

func (f *lineFilter) parseError(err error) {
	msg := "the line is not a JSON-RPC 2.0 message (" + err.Error() + "); send one JSON-RPC object per line"
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": msg}})
	_, _ = f.out.Write(append(b, '\n'))
}

// lockedWriter serializes the SDK's messages and the filter's errors:
// each is one Write of a whole line. It also keeps the ids of the
// requests not yet answered.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer

	pmu      sync.Mutex
	pending  map[jsonrpc.ID]struct{}
	answered chan struct{} // closed and replaced at each answer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	// Counted answered whether or not the write went through: a client
	// that is gone waits for nothing.
	if id, ok := answerID(p); ok {
		l.answer(id)
	}
	return n, err
}

// asked notes a request passed on to the SDK.
func (l *lockedWriter) asked(id jsonrpc.ID) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	if l.pending == nil {
		l.pending = map[jsonrpc.ID]struct{}{}
	}
	l.pending[id] = struct{}{}
}

func (l *lockedWriter) answer(id jsonrpc.ID) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	delete(l.pending, id)
	if l.answered != nil {
		close(l.answered)
		l.answered = nil
	}
}

// waitAnswered returns once every request asked has been answered, or
// done is closed.
func (l *lockedWriter) waitAnswered(done <-chan struct{}) {
	for {
		l.pmu.Lock()
		if len(l.pending) == 0 {
			l.pmu.Unlock()
			return
		}
		if l.answered == nil {
			l.answered = make(chan struct{})
		}
		ch := l.answered
		l.pmu.Unlock()
		select {
		case <-ch:
		case <-done:
			return
		}
	}
}

func (l *lockedWriter) Close() error { return nil }
