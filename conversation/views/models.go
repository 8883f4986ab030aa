package views

import (
	"fmt"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/projections"
)

// Names of the read models, as projections and as views of `conv show`.
const (
	ViewTimeline    = "timeline"
	ViewLLMContext  = "llm_context"
	ViewStatus      = "status"
	ViewDiagnostics = "diagnostics"
)

// Views lists the read models in the order `conv show` documents them.
func Views() []string { return []string{ViewTimeline, ViewLLMContext, ViewStatus, ViewDiagnostics} }

// selector is every read model's: one state per conversation stream, over
// the conversation events only.
var selector = projections.Selector{StreamPrefix: conversation.StreamPrefix, Types: conversation.TypePattern, PerStream: true}

// Options configure the read models. The zero value gives the defaults.
type Options struct {
	// LLMContext bounds the llm_context read model.
	LLMContext LLMContextOptions
}

// Projections returns the four read models, ready for projections.NewRunner.
func Projections(opts Options) []projections.Definition {
	return []projections.Definition{
		projections.MustDefine[*Timeline](TimelineProjection{}),
		projections.MustDefine[*LLMContext](LLMContextProjection{Options: opts.LLMContext}),
		projections.MustDefine[*Status](StatusProjection{}),
		projections.MustDefine[*Diagnostics](DiagnosticsProjection{}),
	}
}

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
		if inner, ok := strings.CutPrefix(key, conversation.StreamPrefix); ok && CheckKey(inner) == nil {
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
