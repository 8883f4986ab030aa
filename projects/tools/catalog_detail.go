package tools

import (
	"encoding/json"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// Detail is a Spec with what else the catalog declares about the tool:
// its output schema (nil when it has none) and its Safety. It is what a
// protocol gateway lists (MCP: outputSchema and the read-only,
// destructive and idempotent hints).
type Detail struct {
	Spec
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// TextField names the output's member that is its text, or "".
	TextField string `json:"text_field,omitempty"`
	Safety    Safety `json:"safety"`
}

// Details is List with each tool's Detail: the same tools, in the same
// order.
func (c *Catalog) Details(p *policy.Policy) []Detail {
	specs := c.List(p)
	ds := make([]Detail, len(specs))
	for i, s := range specs {
		t := c.byName[s.Name].tool
		ds[i] = Detail{Spec: s, OutputSchema: t.OutputSchema, TextField: t.TextField, Safety: t.Safety}
	}
	return ds
}
