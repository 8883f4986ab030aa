package bus

import (
	"strings"
	"testing"
)

// TestAgentIDLength: an id of MaxAgentIDLen bytes is valid, one byte more
// is refused with an invalid_agent_id error that states the limit.
func TestAgentIDLength(t *testing.T) {
	longest := strings.Repeat("a", MaxAgentIDLen-4) + "/b-c"
	if err := ValidateAgentID(longest); err != nil {
		t.Fatalf("%d-byte id: %v", len(longest), err)
	}
	err := ValidateAgentID(longest + "d")
	if ErrorType(err) != ReasonInvalidAgentID || !strings.Contains(err.Error(), "257 bytes long; the limit is 256") {
		t.Fatalf("257-byte id: %v", err)
	}
	s, _ := NewSubjects("")
	if _, err := s.Parse(s.Agent(longest+"d", "x")); ErrorType(err) != ReasonInvalidAgentID {
		t.Fatalf("257-byte id in a subject: %v", err)
	}
}
