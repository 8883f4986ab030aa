package frontdoor

import (
	"io"
	"log"
	"net/http"
	"time"
)

// NewServer returns the http.Server for h with o's header timeout, idle
// timeout and header size limit (a longer header is answered 431 by
// net/http). It sets no ReadTimeout or WriteTimeout: those would end
// every stream (MCP's GET, A2A's message/stream) after a fixed time; the
// door bounds each body read and each write instead.
func NewServer(o Options, h http.Handler) *http.Server {
	o = o.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		// Bad TLS handshakes and the like are a client's problem, not
		// the operator's: keep them off stderr.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// deadlineWriter sets a write deadline before each write and flush, so
// that a response lives as long as its client takes what it is sent.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(p)
}

// Flush lets streaming mounts (SSE) flush through the wrapper.
func (w *deadlineWriter) Flush() {
	w.arm()
	_ = w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
