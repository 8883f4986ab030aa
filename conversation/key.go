package conversation

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// Key returns the conversation key "<project-id>/<conversation-id>" and
// checks its form: two ids of [A-Za-z0-9][A-Za-z0-9_-]*, at most
// bus.MaxAgentIDLen bytes in all: the key is the agent id of the
// conversation's agent, so it is exactly an agent id of two segments.
func Key(project, conv string) (string, error) {
	key := project + "/" + conv
	return key, CheckKey(key)
}

// CheckKey reports whether key is "<project-id>/<conversation-id>".
func CheckKey(key string) error {
	var project, conv string
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			project, conv = key[:i], key[i+1:]
			break
		}
	}
	if !validID(project) || !validID(conv) {
		if inner, ok := strings.CutPrefix(key, StreamPrefix); ok && CheckKey(inner) == nil {
			// The stream's name, as `jido-bus log` shows it.
			return fmt.Errorf("conversation %q is a stream name; the conversation is %s", key, inner)
		}
		return fmt.Errorf("conversation %q: want <project-id>/<conversation-id>, each of letters, digits, '_' and '-', starting with a letter or digit (the conversation's agent id)", key)
	}
	if err := bus.ValidateAgentID(key); err != nil {
		return fmt.Errorf("conversation %q: %w", key, err)
	}
	return nil
}

func validID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ValidateID checks a conversation's id in its project: one segment
// of an agent id.
func ValidateID(conv string) error {
	if strings.Contains(conv, "/") {
		return bus.Errorf(bus.ReasonInvalidRequest, "conversation id %q holds '/': give the id in the project, one segment of letters, digits, '_' and '-' (the agent id is <project>/<conversation>)", conv)
	}
	if err := bus.ValidateAgentID(conv); err != nil {
		return bus.Errorf(bus.ReasonInvalidRequest, "conversation id %q: %s", conv, bus.AsError(err).Message)
	}
	return nil
}

// Under returns, sorted, the ids among ids that are keys under project's
// id ("<project>/…"): the conversations among a project agent's children.
func Under(project string, ids iter.Seq[string]) []string {
	var keys []string
	for id := range ids {
		if strings.HasPrefix(id, project+"/") {
			keys = append(keys, id)
		}
	}
	slices.Sort(keys)
	return keys
}
