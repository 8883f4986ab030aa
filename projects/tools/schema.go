package tools

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// errNoLoading refuses every "$ref" outside the schema itself: the library
// would otherwise read file:// URLs, and an asset tool's schema comes from a
// project folder that may be someone else's clone.
var errNoLoading = errors.New(`a tool schema must be self-contained: "$ref" may only point inside it ("#/$defs/…")`)

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: %w", url, errNoLoading)
}

// schemaCache compiles each distinct schema text once per catalog build:
// the thousand commands of a project share one input schema.
type schemaCache map[string]*jsonschema.Schema

func (sc schemaCache) compile(url string, schema []byte) (*jsonschema.Schema, error) {
	if s, ok := sc[string(schema)]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", url, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	sc[string(schema)] = s
	return s, nil
}

// printer renders the library's error kinds; it holds no mutable state.
var printer = message.NewPrinter(language.English)

// validationLeaves turns the library's tree of causes into its leaves,
// "at /a: got string, want integer", sorted so the same value fails with
// the same text every time.
func validationLeaves(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, "at /"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	return slices.Compact(leaves)
}

func unmarshalAny(data []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(data)) }
