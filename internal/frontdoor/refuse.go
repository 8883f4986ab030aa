package frontdoor

import (
	"encoding/json"
	"net/http"

	"github.com/jido-bus/jido-bus/bus"
)

// The machine words of the door's refusals, beside bus's reason words.
const (
	// ReasonUnauthorized: no token, or one the door does not know (401).
	ReasonUnauthorized = "unauthorized"
	// ReasonTimeout: the client did not send its body in time (408).
	ReasonTimeout = "timeout"
)

// refusal is the body of every answer the door gives instead of a mount:
// protocol-neutral, so that an MCP, an A2A or a plain HTTP client can
// read it.
type refusal struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// refuse answers r's refusal and reports it (Options.OnRefused). A
// request with a body is answered on a connection that then closes:
// net/http would otherwise read what is left of the body before it sends
// the answer, with no deadline (the door sets one only to read a body it
// admits), so a refused request whose body never came held its
// connection for good and was never answered.
func (d *door) refuse(w http.ResponseWriter, r *http.Request, code int, typ, message string) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
	refuse(w, code, typ, message)
	if d.o.OnRefused != nil {
		d.o.OnRefused(r, code, typ, message)
	}
}

// refuse answers code with {"error":{"type","message"}}.
func refuse(w http.ResponseWriter, code int, typ, message string) {
	var r refusal
	r.Error.Type, r.Error.Message = typ, message
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(r)
}

// Reason words used from bus, named here so the table of refusals reads
// in one place.
const (
	reasonForbidden = bus.ReasonForbidden
	reasonInvalid   = bus.ReasonInvalidRequest
	reasonNotFound  = bus.ReasonNotFound
	reasonTooLarge  = bus.ReasonTooLarge
	reasonBusy      = bus.ReasonUnavailable
)
