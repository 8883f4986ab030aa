package schemas

import (
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Entry describes one registered schema, as `jido-bus schema ls` lists it.
type Entry struct {
	// Name is unique within a Registry: a signal type for kind "signal",
	// "directive.<kind>" for kind "directive".
	Name string `json:"name"`
	// Kind is the directory the schema file sits in ("signal", "directive",
	// "defs", and whatever later packages add).
	Kind        string `json:"kind"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Registry holds named schemas loaded from files laid out as
// <kind>/<name>.json. Schemas in one registry may refer to each other with
// relative "$ref"s ("../defs/cloudevent.json").
//
// A Registry is filled at program start (Builtin, AddFS) and read
// afterwards: lookups are safe for concurrent use, adding is not safe
// concurrently with anything else.
type Registry struct {
	docs    map[string]any // decoded documents by URL, for resolving "$ref"
	schemas map[string]*Schema
	entries []Entry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{docs: make(map[string]any), schemas: make(map[string]*Schema)}
}

// AddFS adds every <kind>/<name>.json file of fsys. All files are read
// before any is compiled, so they may refer to each other and to schemas
// already in the registry. Nothing is added if any file fails; the error
// names the file. A name already registered is an error.
func (r *Registry) AddFS(fsys fs.FS) error {
	type file struct {
		kind, name, url string
		source          []byte
	}
	var files []file
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Ext(p) != ".json" {
			return nil
		}
		dir, base := path.Split(p)
		kind := strings.TrimSuffix(dir, "/")
		if kind == "" || strings.Contains(kind, "/") {
			return fmt.Errorf("schema file %s: want <kind>/<name>.json", p)
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, file{kind: kind, name: strings.TrimSuffix(base, ".json"), url: baseURL + p, source: src})
		return nil
	})
	if err != nil {
		return err
	}
	docs := make(map[string]any, len(r.docs)+len(files))
	for url, doc := range r.docs {
		docs[url] = doc
	}
	seen := make(map[string]string)
	for _, f := range files {
		if _, dup := r.schemas[f.name]; dup {
			return fmt.Errorf("schema file %s/%s.json: a schema named %q is already registered", f.kind, f.name, f.name)
		}
		if other, dup := seen[f.name]; dup {
			return fmt.Errorf("schema files %s/%s.json and %s/%s.json have the same name", f.kind, f.name, other, f.name)
		}
		seen[f.name] = f.kind
		doc, err := decodeDocument(f.kind+"/"+f.name+".json", f.source)
		if err != nil {
			return err
		}
		docs[f.url] = doc
	}
	c := newCompiler()
	for url, doc := range docs {
		if err := c.AddResource(url, doc); err != nil {
			return fmt.Errorf("schema %s: %w", url, err)
		}
	}
	added := make(map[string]*Schema, len(files))
	var entries []Entry
	for _, f := range files {
		compiled, err := c.Compile(f.url)
		if err != nil {
			return fmt.Errorf("schema file %s/%s.json: %w", f.kind, f.name, err)
		}
		s := &Schema{name: f.name, source: f.source, compiled: compiled}
		added[f.name] = s
		entries = append(entries, Entry{Name: f.name, Kind: f.kind, Title: s.Title(), Description: s.Description()})
	}
	r.docs = docs
	for name, s := range added {
		r.schemas[name] = s
	}
	r.entries = append(r.entries, entries...)
	slices.SortFunc(r.entries, func(a, b Entry) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return nil
}

// Lookup returns the schema registered under name.
func (r *Registry) Lookup(name string) (*Schema, bool) {
	s, ok := r.schemas[name]
	return s, ok
}

// Entries lists the registered schemas sorted by kind, then name.
func (r *Registry) Entries() []Entry { return slices.Clone(r.entries) }

// Validate checks v, a decoded JSON value, against the schema registered
// under name. An unknown name is an *UnknownSchemaError; a value that fails
// is a *ValidationError.
func (r *Registry) Validate(name string, v any) error {
	s, ok := r.Lookup(name)
	if !ok {
		return &UnknownSchemaError{Name: name}
	}
	return s.Validate(v)
}

// UnknownSchemaError reports a lookup of a name no schema is registered
// under.
type UnknownSchemaError struct{ Name string }

func (e *UnknownSchemaError) Error() string { return fmt.Sprintf("no schema named %q", e.Name) }
