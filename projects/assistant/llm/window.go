package llm

import (
	"fmt"
	"strings"
)

// DefaultWindow is the context window, in tokens, of a model whose
// window its operator did not give: the common size of today's hosted
// models, small enough that compaction comes before most of them refuse
// a request. A node's operator changes it with serve --context-window.
const DefaultWindow int64 = 128_000

// MinWindow is the smallest window an operator may give: a summary, the
// task and the last turn must fit in it.
const MinWindow int64 = 100

// validateWindow says what is wrong with window tokens for model at
// provider.
func validateWindow(provider, model string, tokens int64) error {
	if strings.TrimSpace(model) == "" {
		return fmt.Errorf("provider %s: a window for an empty model name: key each window by the model's name as projects ask for it", provider)
	}
	if tokens < MinWindow {
		return fmt.Errorf("provider %s: window of %s is %d tokens: give the model's context window in tokens, at least %d (e.g. 128000)", provider, model, tokens, MinWindow)
	}
	return nil
}

// Window returns the context window of model at e, and false when its
// operator gave none.
func (e Endpoint) Window(model string) (int64, bool) {
	w, ok := e.Windows[model]
	return w, ok && w > 0
}
