package node

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/eventlog"
)

// Readiness checks, by the name /readyz and ping report them under.
const (
	checkLog      = "log"      // the event log takes writes (not failed)
	checkRecovery = "recovery" // the start is done: agents recovered, conversations and projects back, the control plane answering
	checkNATS     = "nats"     // the node's NATS connection is up
)

// health tracks what readiness needs beyond the parts themselves.
type health struct {
	recovered atomic.Bool // Start has ended: recovery done, the control plane answers
}

// readiness is the answer of /readyz and the readiness part of ping: each
// check "ok" or why not, and the names of those that are not.
type readiness struct {
	Ready   bool              `json:"ready"`
	Checks  map[string]string `json:"checks"`
	Failing []string          `json:"failing,omitempty"`
}

// check reports whether a node with log and nc takes work: the log is
// writable, recovery is done, NATS is connected. A nil log or nc is one
// not open yet.
func (h *health) check(log *eventlog.Log, nc *nats.Conn) readiness {
	r := readiness{Ready: true, Checks: map[string]string{}}
	set := func(name, problem string) {
		if problem == "" {
			r.Checks[name] = "ok"
			return
		}
		r.Checks[name] = problem
		r.Failing = append(r.Failing, name)
		r.Ready = false
	}
	switch {
	case log == nil:
		set(checkLog, "the event log is not open yet")
	case log.Failed() != nil:
		set(checkLog, fmt.Sprintf("the event log failed and takes no writes: %v", log.Failed()))
	default:
		set(checkLog, "")
	}
	if h.recovered.Load() {
		set(checkRecovery, "")
	} else {
		set(checkRecovery, "the node is starting: recovering the agents from the log, resuming conversations, reopening projects")
	}
	switch {
	case nc == nil:
		set(checkNATS, "not connected yet")
	case !nc.IsConnected():
		set(checkNATS, fmt.Sprintf("not connected to NATS (%s); the node keeps trying", nc.Status()))
	default:
		set(checkNATS, "")
	}
	return r
}

// healthHandlers serves /healthz (200 while the process serves HTTP) and
// /readyz (200 when ready, else 503; both with the checks as JSON), to
// GET and HEAD only: any other method is 405.
func healthHandlers(mux *http.ServeMux, ready func() readiness) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"alive":true}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		r := ready()
		body, _ := json.Marshal(r) // strings and bools
		w.Header().Set("Content-Type", "application/json")
		if !r.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write(append(body, '\n'))
	})
}
