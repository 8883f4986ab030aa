package schemas

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// FieldError is one reason a value failed its schema.
type FieldError struct {
	// Pointer is the RFC 6901 JSON pointer of the failing field in the
	// validated value: "" is the value itself, "/by" its member "by",
	// "/items/0" the first element of its member "items". For a missing
	// required member it points at where the member should be.
	Pointer string `json:"pointer"`
	// Message says what is wrong, for a person ("got string, want integer").
	Message string `json:"message"`
}

// ValidationError reports that a value does not satisfy a schema. Fields is
// never empty and is sorted by pointer, so the same value fails with the
// same error every time.
type ValidationError struct {
	// Schema is the name of the schema that rejected the value.
	Schema string
	Fields []FieldError
}

// Pointer returns the JSON pointer of the first failing field.
func (e *ValidationError) Pointer() string { return e.Fields[0].Pointer }

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Schema)
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		p := f.Pointer
		if p == "" {
			p = "/"
		}
		fmt.Fprintf(&b, "%s: %s", p, f.Message)
	}
	return b.String()
}

// printer renders the library's error kinds. message.Printer is safe for
// concurrent use once built and holds no mutable state we change.
var printer = message.NewPrinter(language.English)

// newValidationError flattens the library's tree of causes into the leaves,
// which are the errors a person can act on; the inner nodes only say
// "allOf failed" and the like.
func newValidationError(schema string, err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", schema, err)
	}
	var fields []FieldError
	collectLeaves(ve, &fields)
	if len(fields) == 0 {
		fields = []FieldError{{Pointer: jsonPointer(ve.InstanceLocation), Message: ve.ErrorKind.LocalizedString(printer)}}
	}
	slices.SortStableFunc(fields, func(a, b FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
	fields = slices.Compact(fields)
	return &ValidationError{Schema: schema, Fields: fields}
}

func collectLeaves(ve *jsonschema.ValidationError, out *[]FieldError) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectLeaves(c, out)
		}
		return
	}
	at := jsonPointer(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		// Point at the missing member itself, which is what a caller fixes.
		for _, name := range k.Missing {
			*out = append(*out, FieldError{Pointer: at + "/" + escapePointer(name), Message: "is required"})
		}
		return
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			*out = append(*out, FieldError{Pointer: at + "/" + escapePointer(name), Message: "is not allowed"})
		}
		return
	}
	*out = append(*out, FieldError{Pointer: at, Message: ve.ErrorKind.LocalizedString(printer)})
}

func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

// escapePointer escapes a reference token as RFC 6901 says: '~' first, then '/'.
func escapePointer(tok string) string {
	tok = strings.ReplaceAll(tok, "~", "~0")
	return strings.ReplaceAll(tok, "/", "~1")
}
