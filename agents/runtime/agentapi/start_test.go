package agentapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
)

// TestStartRefusesZeroLimits: over the API a limit given as 0 is a
// mistake, refused with the option's name; leaving it out means the
// default, and an agent started that way runs.
func TestStartRefusesZeroLimits(t *testing.T) {
	f := serve(t, -1)
	start := func(body string) (ok bool, e *bus.Error) {
		t.Helper()
		msg, err := f.nc.Request("jido.api.agent.start", []byte(body), 10*time.Second)
		if err != nil {
			t.Fatalf("start %s: %v", body, err)
		}
		var r struct {
			OK    bool       `json:"ok"`
			Error *bus.Error `json:"error"`
		}
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			t.Fatalf("start %s: reply %s: %v", body, msg.Data, err)
		}
		return r.OK, r.Error
	}
	for _, opt := range []string{"snapshot_every", "max_queue_size", "max_queue_bytes"} {
		for _, zero := range []string{"0", "0.0", "-0"} {
			body := `{"type":"counter","id":"z-` + opt + `","options":{"` + opt + `":` + zero + `}}`
			ok, e := start(body)
			if ok || e == nil || e.Type != bus.ReasonInvalidRequest || !strings.Contains(e.Message, opt) {
				t.Errorf("start %s: ok=%v %+v, want invalid_request naming %s", body, ok, e, opt)
			}
		}
	}
	if _, err := f.rt.State("z-snapshot_every"); err == nil {
		t.Fatal("a refused start left an agent behind")
	}
	if ok, e := start(`{"type":"counter","id":"d1","options":{"snapshot_every":5}}`); !ok {
		t.Fatalf("start with snapshot_every 5: %+v", e)
	}
	if ok, e := start(`{"type":"counter","id":"d2","options":{}}`); !ok {
		t.Fatalf("start with no options: %+v", e)
	}
}
