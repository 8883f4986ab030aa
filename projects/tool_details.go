package projects

import "github.com/jido-bus/jido-bus/projects/tools"

// ToolDetails is Tools with each tool's output schema and Safety (the MCP
// gateway's tools/list).
func (e *Engine) ToolDetails(id string) ([]tools.Detail, error) {
	p, err := e.usable(id)
	if err != nil {
		return nil, err
	}
	return p.catalog().Details(p.box().Policy), nil
}
