package tools

import (
	"context"
	"errors"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// graphSearch is the skill graph's search tool, named in other tools' errors.
const graphSearch = "skill_graph_search"

const noteID = `{"type":"string","minLength":1,"description":"a note's id: its path below skill_graph without .md"}`

func graphTools(g *assets.Graph) []Tool {
	notFound := func(id string) error {
		return bus.Errorf(bus.ReasonNotFound, "no note %q in the skill graph; find notes with skill_graph_search", id)
	}
	type idArgs struct {
		ID string `json:"id"`
	}
	return []Tool{{
		Name:         graphSearch,
		Description:  "Full-text search of the project's skill graph notes: every word must appear (case-insensitive); best matches first.",
		InputSchema:  []byte(`{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"hits":{"type":"array"}},"required":["hits"]}`),
		Safety:       Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			hits := g.Search(a.Query, a.Limit)
			if hits == nil {
				hits = []assets.SearchHit{}
			}
			return map[string]any{"hits": hits}, nil
		},
	}, {
		Name:         "skill_graph_node",
		Description:  "One note of the skill graph: title, headings, links and text.",
		InputSchema:  []byte(`{"type":"object","properties":{"id":` + noteID + `},"required":["id"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","required":["id","title","text"]}`),
		TextField:    "text",
		Safety:       Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a idArgs
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			n, ok := g.Node(a.ID)
			if !ok {
				return nil, notFound(a.ID)
			}
			return n, nil
		},
	}, {
		Name:         "skill_graph_neighbours",
		Description:  "The notes a skill graph note links to (out) and the notes linking to it (in).",
		InputSchema:  []byte(`{"type":"object","properties":{"id":` + noteID + `},"required":["id"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","required":["out","in"]}`),
		Safety:       Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a idArgs
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			nb, ok := g.Neighbours(a.ID)
			if !ok {
				return nil, notFound(a.ID)
			}
			return nb, nil
		},
	}, {
		Name:         "skill_graph_path",
		Description:  "A shortest chain of notes connecting two skill graph notes, following links either way.",
		InputSchema:  []byte(`{"type":"object","properties":{"from":` + noteID + `,"to":` + noteID + `},"required":["from","to"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"path":{"type":"array","items":{"type":"string"}}},"required":["path"]}`),
		Safety:       Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				From string `json:"from"`
				To   string `json:"to"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			p, err := g.Path(a.From, a.To)
			switch {
			case errors.Is(err, assets.ErrUnknownNote):
				return nil, bus.Errorf(bus.ReasonNotFound, "%v; find notes with skill_graph_search", err)
			case errors.Is(err, assets.ErrNoPath):
				return nil, bus.Errorf(bus.ReasonNotFound, "%v", err)
			case err != nil:
				return nil, err
			}
			return map[string]any{"path": p}, nil
		},
	}}
}
