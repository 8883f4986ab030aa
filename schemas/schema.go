package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// baseURL is where schemas are placed for resolving "$ref"s between them. It
// is an identifier, never fetched: the compiler only sees documents we add.
const baseURL = "https://jido-bus.dev/schemas/"

// Schema is a compiled JSON Schema with its name and source text. It is
// immutable and safe for concurrent use.
type Schema struct {
	name     string
	source   []byte
	compiled *jsonschema.Schema
}

// Compile compiles one self-contained schema. A schema without "$schema" is
// read as draft 2020-12. name identifies the schema in errors ("counter:
// action increment"); it need not be unique. The error says which keyword
// is wrong.
func Compile(name string, source []byte) (*Schema, error) {
	doc, err := decodeDocument(name, source)
	if err != nil {
		return nil, err
	}
	url := baseURL + "inline/" + urlSafe(name) + ".json"
	c := newCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return &Schema{name: name, source: bytes.Clone(source), compiled: compiled}, nil
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A schema that says "format": "date-time" means it; the library only
	// annotates formats unless told to assert them.
	c.AssertFormat()
	return c
}

func decodeDocument(name string, source []byte) (any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(source))
	if err != nil {
		return nil, fmt.Errorf("schema %s is not JSON: %w", name, err)
	}
	return doc, nil
}

// urlSafe keeps a name readable inside a URL path; the URL only has to be
// unique within one compiler, which holds one inline schema.
func urlSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// Name returns the name the schema was compiled or registered under.
func (s *Schema) Name() string { return s.name }

// Source returns a copy of the schema's JSON text as written.
func (s *Schema) Source() []byte { return bytes.Clone(s.source) }

// Title returns the schema's "title", or "".
func (s *Schema) Title() string { return s.compiled.Title }

// Description returns the schema's "description", or "".
func (s *Schema) Description() string { return s.compiled.Description }

// Properties returns the names of the members the schema declares at its top
// level ("properties", including those of "$ref" and "allOf" branches),
// sorted. Agent definitions use it to find state keys that collide.
func (s *Schema) Properties() []string {
	var names []string
	for _, sch := range objectBranches(s.compiled) {
		for name := range sch.Properties {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Validate checks v, a decoded JSON value, against the schema. The error is
// a *ValidationError naming the JSON pointer of each failing field.
func (s *Schema) Validate(v any) error {
	if err := s.compiled.Validate(v); err != nil {
		return newValidationError(s.name, err)
	}
	return nil
}

// ValidateJSON decodes data and validates it. Numbers are decoded as
// json.Number, so integers beyond 2^53 are checked exactly. Data that is not
// one JSON value is a *ValidationError at pointer "".
func (s *Schema) ValidateJSON(data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &ValidationError{Schema: s.name, Fields: []FieldError{{Pointer: "", Message: "not JSON: " + err.Error()}}}
	}
	return s.Validate(v)
}

// MarshalJSON writes the schema's source, so a Schema embedded in a listing
// prints as the schema itself.
func (s *Schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, s.source); err != nil {
		return nil, fmt.Errorf("schema %s: %w", s.name, err)
	}
	return b.Bytes(), nil
}

// objectBranches returns sch and the schemas whose object members also
// apply to the same value: its "$ref" target and its "allOf" members,
// recursively. Cycles through "$ref" are cut.
func objectBranches(sch *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || slices.Contains(out, s) {
			return
		}
		out = append(out, s)
		walk(s.Ref)
		for _, a := range s.AllOf {
			walk(a)
		}
	}
	walk(sch)
	return out
}
