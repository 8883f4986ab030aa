package schemas

import (
	"embed"
	"io/fs"
)

// builtinFiles are the schemas shipped in the binary. Dropping a file into
// json/<kind>/ adds it; nothing else needs to change.
//
//go:embed json
var builtinFiles embed.FS

// Builtin returns a new registry holding every built-in schema: the
// lifecycle signals, the log form of each built-in directive, and their
// shared definitions. Each call compiles afresh and returns a registry the
// caller owns (add its own schemas to it with AddFS).
func Builtin() (*Registry, error) {
	sub, err := fs.Sub(builtinFiles, "json")
	if err != nil {
		return nil, err
	}
	r := NewRegistry()
	if err := r.AddFS(sub); err != nil {
		return nil, err
	}
	return r, nil
}

// BuiltinFS returns the built-in schema files laid out as <kind>/<name>.json,
// for tools that want the text rather than compiled schemas.
func BuiltinFS() fs.FS {
	sub, err := fs.Sub(builtinFiles, "json")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "json" is valid.
		panic(err)
	}
	return sub
}
