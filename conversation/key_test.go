package conversation

import (
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

// TestCheckKeyIsAnAgentID: a conversation key is its agent's id, so every
// key CheckKey accepts is an agent id 'agent start --id' accepts too, of
// exactly two segments.
func TestCheckKeyIsAnAgentID(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"p1/c1", true}, {"p-1/c_1", true}, {"P/9", true},
		{"p.x/c1", false}, {"p/c.1", false}, {"p/c1/x", false}, {"p", false},
		{"/c1", false}, {"p/", false}, {"_p/c", false}, {"p/-c", false},
		{"p/" + strings.Repeat("c", bus.MaxAgentIDLen), false},
		{"conversation/p/c", false},
	} {
		err := CheckKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("CheckKey(%q) = %v, want ok %v", tc.key, err, tc.ok)
		}
		if err == nil {
			if aerr := bus.ValidateAgentID(tc.key); aerr != nil {
				t.Errorf("CheckKey accepts %q, which is no agent id: %v", tc.key, aerr)
			}
		}
	}
}
