package views

import (
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
