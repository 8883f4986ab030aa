package assets

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// errNoLoading refuses every "$ref" to a document outside the schema. The
// library's default loader reads file:// URLs, and a workflow comes from a
// project folder that may be someone else's clone: a "$ref" to
// file:///dev/zero or a secret must not be followed.
var errNoLoading = errors.New(`a workflow input schema must be self-contained: "$ref" may only point inside it ("#/$defs/…")`)

type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: %w", url, errNoLoading)
}

// compileInputSchema compiles one input's schema, a decoded JSON value, as
// draft 2020-12 with formats asserted.
func compileInputSchema(input string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	url := "urn:jido-bus:workflow-input:" + input
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// printer renders the library's error kinds; it holds no mutable state.
var printer = message.NewPrinter(language.English)

// describeValidation turns the library's tree of causes into one line of
// its leaves, "at /a: got string, want integer; …", sorted so the same
// value fails with the same text every time.
func describeValidation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var leaves []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, "at "+at+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(leaves)
	return strings.Join(slices.Compact(leaves), "; ")
}
