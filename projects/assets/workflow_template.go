package assets

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Template syntax of a workflow step's string arguments.
//
//	{{inputs.NAME}}              the workflow input NAME
//	{{inputs.NAME.a.0}}          member a of it, then element 0 of that
//	{{steps.ID.output}}          the output of the earlier step ID
//	{{steps.ID.output.content}}  member content of that output
//	\{{                          a literal "{{"
//
// Spaces inside the braces are allowed ({{ inputs.path }}). Names, ids and
// members are made of A-Z a-z 0-9 _ -; a member that is all digits indexes
// a list. An argument that is exactly one reference takes the referenced
// value as it is (an object stays an object, a number a number); a
// reference inside longer text is replaced by the value's text (a string
// as is, anything else as JSON). Every "{{" must open a valid reference, so
// a typo is a load error, not text sent to a tool.

// refKind says what a reference points into.
type refKind int

const (
	refInput refKind = iota
	refStep
)

// ref is one parsed {{…}} reference.
type ref struct {
	kind refKind
	name string   // the input name or the step id
	path []string // members below the input or the step's output
	text string   // as written between the braces, trimmed, for errors
}

// templatePart is literal text or a reference.
type templatePart struct {
	lit string
	ref *ref
}

var (
	inputRef = regexp.MustCompile(`^inputs\.([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_-]+)*)$`)
	stepRef  = regexp.MustCompile(`^steps\.([A-Za-z0-9_-]+)\.output((?:\.[A-Za-z0-9_-]+)*)$`)
)

// parseTemplate splits s into literal text and references.
func parseTemplate(s string) ([]templatePart, error) {
	var parts []templatePart
	var lit strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			lit.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '\\' {
			lit.WriteString(s[:i-1])
			lit.WriteString("{{")
			s = s[i+2:]
			continue
		}
		lit.WriteString(s[:i])
		end := strings.Index(s[i+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%q has no closing }} (write \\{{ for a literal {{)", s[i:])
		}
		inner := strings.TrimSpace(s[i+2 : i+2+end])
		r, err := parseRef(inner)
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			parts = append(parts, templatePart{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, templatePart{ref: r})
		s = s[i+2+end+2:]
	}
	if lit.Len() > 0 || len(parts) == 0 {
		parts = append(parts, templatePart{lit: lit.String()})
	}
	return parts, nil
}

func parseRef(inner string) (*ref, error) {
	if m := inputRef.FindStringSubmatch(inner); m != nil {
		return &ref{kind: refInput, name: m[1], path: splitPath(m[2]), text: inner}, nil
	}
	if m := stepRef.FindStringSubmatch(inner); m != nil {
		return &ref{kind: refStep, name: m[1], path: splitPath(m[2]), text: inner}, nil
	}
	return nil, fmt.Errorf("{{%s}} is not a reference: write {{inputs.NAME}} or {{steps.ID.output}} (\\{{ for a literal {{)", inner)
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p[1:], ".")
}

// walkStrings calls f on every string inside v (a decoded JSON value) and
// stops at the first error.
func walkStrings(v any, f func(string) error) error {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		for _, e := range v {
			if err := walkStrings(e, f); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := walkStrings(e, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// renderValue returns a copy of v with every string rendered as a
// template against the inputs and the earlier outputs. The templates were
// checked at load, so the only errors are members missing at run time.
func renderValue(v any, inputs map[string]any, outputs map[string]any) (any, error) {
	switch v := v.(type) {
	case string:
		return renderString(v, inputs, outputs)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := renderValue(e, inputs, outputs)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := renderValue(e, inputs, outputs)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func renderString(s string, inputs, outputs map[string]any) (any, error) {
	parts, err := parseTemplate(s)
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 && parts[0].ref != nil {
		return resolveRef(parts[0].ref, inputs, outputs)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.ref == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := resolveRef(p.ref, inputs, outputs)
		if err != nil {
			return nil, err
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
			continue
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("{{%s}}: the value cannot be written as JSON: %w", p.ref.text, err)
		}
		b.Write(j)
	}
	return b.String(), nil
}

func resolveRef(r *ref, inputs, outputs map[string]any) (any, error) {
	var v any
	var ok bool
	if r.kind == refInput {
		v, ok = inputs[r.name]
		if !ok {
			return nil, fmt.Errorf("{{%s}}: input %q was not given and has no default", r.text, r.name)
		}
	} else {
		v = outputs[r.name]
	}
	base := "inputs." + r.name
	if r.kind == refStep {
		base = "steps." + r.name + ".output"
	}
	for i, member := range r.path {
		next, err := member1(jsonShaped(v), member)
		if err != nil {
			where := strings.Join(append([]string{base}, r.path[:i]...), ".")
			return nil, fmt.Errorf("{{%s}}: %s %w", r.text, where, err)
		}
		v = next
	}
	return v, nil
}

// jsonShaped returns v as encoding/json would decode it when v is some
// other Go type (a tool may return a struct), so members can be reached;
// objects, lists and scalars already in that shape are returned as they are.
func jsonShaped(v any) any {
	switch v.(type) {
	case nil, string, bool, float64, map[string]any, []any:
		return v
	}
	j, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(j, &out) != nil {
		return v
	}
	return out
}

// member1 steps one member into v: a key of an object or an index of a list.
func member1(v any, member string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		e, ok := v[member]
		if !ok {
			return nil, fmt.Errorf("has no member %q", member)
		}
		return e, nil
	case []any:
		i, err := strconv.Atoi(member)
		if err != nil || i < 0 || i >= len(v) {
			return nil, fmt.Errorf("is a list of %d; %q is not an index in it", len(v), member)
		}
		return v[i], nil
	}
	return nil, fmt.Errorf("is a %s, not an object or a list, so it has no member %q", jsonTypeName(v), member)
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, json.Number, int, int64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
