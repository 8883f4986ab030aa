package tools

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Catalog is an immutable set of tools, their schemas compiled. Build a new
// one when the set changes (an asset reload) and hand it to
// Runner.SetCatalog; any number of goroutines may use a Catalog at once.
type Catalog struct {
	byName map[string]*entry
	names  []string // sorted
	// toAPI and fromAPI are the bijection between tool names and the
	// names LLM APIs accept (api_name.go).
	toAPI, fromAPI map[string]string
}

type entry struct {
	tool  Tool
	input *jsonschema.Schema
}

// Spec is a tool as an LLM tool-use API or an MCP server lists it: its
// name, its description and its input schema, as JSON. Name is the
// catalog's (what the runner, MCP and the log use); APIName is the name to
// give an LLM tool-use API, whose alphabet is narrower (Catalog.Lookup
// maps it back).
type Spec struct {
	Name        string          `json:"name"`
	APIName     string          `json:"api_name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// NewCatalog builds a catalog of tools. It refuses a bad or duplicate name,
// a missing Func, a schema that is not a draft 2020-12 JSON Schema, and two
// names that would share an API name, naming the tool.
func NewCatalog(tools ...Tool) (*Catalog, error) {
	c := &Catalog{byName: make(map[string]*entry, len(tools))}
	sc := schemaCache{}
	for _, t := range tools {
		if !validName(t.Name) {
			return nil, fmt.Errorf("tool %q: a name is 1–128 of a-z A-Z 0-9 _ . : -", t.Name)
		}
		if _, dup := c.byName[t.Name]; dup {
			return nil, fmt.Errorf("tool %s: registered twice", t.Name)
		}
		if t.Func == nil {
			return nil, fmt.Errorf("tool %s: has no Func", t.Name)
		}
		if len(t.InputSchema) == 0 {
			return nil, fmt.Errorf("tool %s: has no input schema", t.Name)
		}
		in, err := sc.compile("urn:jido-bus:tool:"+t.Name+":input", t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		if len(t.OutputSchema) > 0 {
			if _, err := sc.compile("urn:jido-bus:tool:"+t.Name+":output", t.OutputSchema); err != nil {
				return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
			}
		}
		c.byName[t.Name] = &entry{tool: t, input: in}
		c.names = append(c.names, t.Name)
	}
	sort.Strings(c.names)
	c.addUses()
	var err error
	if c.toAPI, c.fromAPI, err = apiNames(c.names); err != nil {
		return nil, err
	}
	return c, nil
}

// addUses adds to each tool that calls others (Tool.Uses) what they do:
// a workflow of reads is read-only, one with a run_command step runs
// programs. A tool the catalog lacks counts as doing everything.
func (c *Catalog) addUses() {
	for _, e := range c.byName {
		for _, u := range e.tool.Uses {
			s := Safety{Reads: true, Writes: true, Runs: true}
			if used, ok := c.byName[u]; ok {
				s = used.tool.Safety
			}
			e.tool.Safety.Reads = e.tool.Safety.Reads || s.Reads
			e.tool.Safety.Writes = e.tool.Safety.Writes || s.Writes
			e.tool.Safety.Runs = e.tool.Safety.Runs || s.Runs
		}
	}
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '.' || b == ':' || b == '-') {
			return false
		}
	}
	return true
}

// Has reports whether the catalog holds a tool of that name (the
// assets.ToolNames the workflow loader takes).
func (c *Catalog) Has(name string) bool {
	_, ok := c.byName[name]
	return ok
}

// Get returns the tool of that name.
func (c *Catalog) Get(name string) (Tool, bool) {
	e, ok := c.byName[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Names are every tool's name, sorted.
func (c *Catalog) Names() []string { return append([]string(nil), c.names...) }

// List returns, sorted by name, the tools p does not deny (allow and ask
// both: an ask tool is offered, and its call reports approval_required).
// A tool that runs programs is left out while p lists none
// (commands.programs): every call of it would be denied.
func (c *Catalog) List(p *policy.Policy) []Spec {
	specs := make([]Spec, 0, len(c.names))
	for _, n := range c.names {
		t := c.byName[n].tool
		if !p.Visible(n) || t.Safety.Runs && len(p.Commands.Programs) == 0 {
			continue
		}
		specs = append(specs, Spec{Name: t.Name, APIName: c.toAPI[t.Name], Description: t.Description, InputSchema: t.InputSchema})
	}
	return specs
}
