package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioConn is the stdio transport's connection: one JSON-RPC message per
// line on in, one per line on out. It replaces the SDK's IOTransport,
// which
//   - ends the session at the first line that is not one JSON value (a
//     client's typo, or `{…} x`, ended `jido-bus mcp` with "invalid
//     trailing data at the end of stream"): here each such line is
//     answered with a JSON-RPC parse error (id null), the way an HTTP
//     server answers a malformed body, and the session goes on;
//   - ends the session at EOF and drops the answers still being made
//     (`printf '…' | jido-bus mcp` got nothing back): here the end of the
//     input waits until every request read has been answered;
//   - decodes each message three times (a stream decoder, an attempt as
//     a batch, then as a message), each with a 32 KiB buffer: here a line
//     is decoded once (decodeMessage). Batches, gone from the protocol
//     since 2025-06-18, are refused as a parse error, as before.
type stdioConn struct {
	in  *bufio.Reader
	wmu sync.Mutex
	out io.Writer

	incoming  chan stdioRead
	closed    chan struct{}
	closeOnce sync.Once

	pmu      sync.Mutex
	pending  map[jsonrpc.ID]struct{} // requests read and not yet answered
	answered chan struct{}           // closed and replaced at each answer
}

type stdioRead struct {
	msg jsonrpc.Message
	err error
}

// maxStdioLine bounds one line (one JSON-RPC message) read from stdin.
const maxStdioLine = 16 << 20

func newStdioConn(in io.Reader, out io.Writer) *stdioConn {
	return &stdioConn{
		in:       bufio.NewReader(in),
		out:      out,
		incoming: make(chan stdioRead),
		closed:   make(chan struct{}),
	}
}

// stdioTransport hands the SDK its one connection, whose reading starts
// at Connect and stops at the end of the input or at Close; done ends
// the wait for answers at the end of the input.
type stdioTransport struct {
	conn *stdioConn
	done <-chan struct{}
}

func (t stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	go t.conn.readLoop(t.done)
	return t.conn, nil
}

// readLoop reads lines until the input ends or the connection closes. A
// goroutine rather than reads in Read: Close must unblock a Read waiting
// for input, and a read of stdin cannot be interrupted, so a loop blocked
// there ends with the process, as the SDK's own does.
func (c *stdioConn) readLoop(done <-chan struct{}) {
	for {
		line, err := c.line()
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			msg, derr := decodeMessage(trimmed)
			req, isReq := msg.(*jsonrpc.Request)
			switch {
			case derr != nil:
				c.parseError(derr)
			case isReq && req.ID.IsValid() && !c.asked(req.ID):
				// The SDK drops such a request without a word (it
				// answers nothing, to not misattribute an error to the
				// request in flight); say so, with id null.
				c.writeError(jsonrpc.CodeInvalidRequest, fmt.Sprintf("request id %v is in use by a request not yet answered; this one was not run: give each request its own id", req.ID.Raw()))
			default:
				if !c.deliver(stdioRead{msg: msg}) {
					return
				}
			}
		}
		if err != nil {
			c.waitAnswered(done)
			c.deliver(stdioRead{err: err})
			return
		}
	}
}

func (c *stdioConn) deliver(r stdioRead) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// line reads one line; a line over maxStdioLine is skipped whole and
// returned as "!" (not JSON).
func (c *stdioConn) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := c.in.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxStdioLine {
			buf = append(buf, chunk...)
		} else {
			buf = []byte("! (longer than 16 MiB)")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, err
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(data)
	// Counted answered whether or not the write went through: a client
	// that is gone waits for nothing.
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.answer(resp.ID)
	}
	return err
}

// writeLine writes data and a newline in one Write: the SDK's messages
// and the parse errors never interleave.
func (c *stdioConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *stdioConn) parseError(err error) {
	c.writeError(jsonrpc.CodeParseError, "the line is not a JSON-RPC 2.0 message ("+err.Error()+"); send one JSON-RPC object per line")
}

// writeError answers a line that reaches no request with an error whose
// id is null.
func (c *stdioConn) writeError(code int64, msg string) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}
	m.JSONRPC, m.ID, m.Error = "2.0", json.RawMessage("null"), jsonrpc.Error{Code: code, Message: msg}
	b, _ := json.Marshal(m)
	_ = c.writeLine(b)
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) SessionID() string { return "" }

// asked notes a request passed on to the SDK; false if a request with
// its id is still waiting for its answer.
func (c *stdioConn) asked(id jsonrpc.ID) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if _, dup := c.pending[id]; dup {
		return false
	}
	if c.pending == nil {
		c.pending = map[jsonrpc.ID]struct{}{}
	}
	c.pending[id] = struct{}{}
	return true
}

func (c *stdioConn) answer(id jsonrpc.ID) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	delete(c.pending, id)
	if c.answered != nil {
		close(c.answered)
		c.answered = nil
	}
}

// waitAnswered returns once every request asked has been answered, or
// done or the connection is closed.
func (c *stdioConn) waitAnswered(done <-chan struct{}) {
	for {
		c.pmu.Lock()
		if len(c.pending) == 0 {
			c.pmu.Unlock()
			return
		}
		if c.answered == nil {
			c.answered = make(chan struct{})
		}
		ch := c.answered
		c.pmu.Unlock()
		select {
		case <-ch:
		case <-done:
			return
		case <-c.closed:
			return
		}
	}
}
