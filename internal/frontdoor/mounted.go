package frontdoor

import (
	"net/http"

	"github.com/jido-bus/jido-bus/bus"
)

// ReportRefusals reports each request mount h refuses with an HTTP error
// (an unknown project, a malformed JSON-RPC body the SDK rejects) to
// onRefused, as the door reports its own (Options.OnRefused): one that
// reaches no project has no project stream to be recorded in, and the
// node files it as a dead letter, so that nothing refused goes
// unrecorded. Errors a gateway answers inside the protocol (a JSON-RPC
// error, an MCP isError) are in the project's stream already.
func ReportRefusals(h http.Handler, onRefused func(r *http.Request, code int, typ, message string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.code >= 400 {
			onRefused(r, sw.code, reasonOfStatus(sw.code), "the gateway answered "+http.StatusText(sw.code))
		}
	})
}

// reasonOfStatus is the refusal's reason word for a mount's HTTP error.
func reasonOfStatus(code int) string {
	switch code {
	case http.StatusNotFound:
		return bus.ReasonNotFound
	case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusNotAcceptable:
		return bus.ReasonMalformed
	case http.StatusRequestEntityTooLarge:
		return bus.ReasonTooLarge
	case http.StatusForbidden:
		return bus.ReasonForbidden
	}
	return bus.ReasonInvalidRequest
}

// statusWriter notes the status a handler answers; streams still flush
// through it (Flush, and Unwrap for http.ResponseController).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
