package agentapi_test

import (
	"strings"
	"testing"
	"time"
)

// TestMalformedIDsAreRefused: an id that breaks the agent id grammar is
// bad input, not an agent that happens to be absent: every verb that
// names an agent answers invalid_agent_id, and the request is
// dead-lettered and counted as a refusal.
func TestMalformedIDsAreRefused(t *testing.T) {
	f := serve(t, -1)
	var sent int
	for _, verb := range []string{"state", "whereis", "await", "stop", "call", "cast"} {
		for _, id := range []string{"a b", "x.y.z", "_x", "a//b", "a>"} {
			body := `{"id":"` + id + `"}`
			if verb == "call" || verb == "cast" {
				body = `{"id":"` + id + `","type":"counter.increment","data":{"by":1}}`
			}
			msg, err := f.nc.Request("jido.api.agent."+verb, []byte(body), 10*time.Second)
			if err != nil {
				t.Fatalf("%s %s: %v", verb, body, err)
			}
			sent++
			if !strings.HasPrefix(string(msg.Data), `{"ok":false,"error":{"type":"invalid_agent_id"`) {
				t.Errorf("%s %s: reply %s, want invalid_agent_id", verb, body, msg.Data)
			}
		}
	}
	if st := f.b.Stats(); st.DeadLetters != uint64(sent) {
		t.Errorf("stats %+v: want %d dead letters, one per refused request", st, sent)
	}
}
