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
type lineFilter struct {
	r    *bufio.Reader
	out  *lockedWriter
	rest []byte // of the line being passed on
}

// maxStdioLine bounds one line (one JSON-RPC message) read from stdin.
const maxStdioLine = 16 << 20

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.rest) == 0 {
		line, err := f.line()
		if len(bytes.TrimSpace(line)) > 0 {
			if _, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(line)); derr == nil {
				f.rest = line
			} else {
				f.parseError(derr)
			}
		}
		if err != nil && len(f.rest) == 0 {
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
// each is one Write of a whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }
