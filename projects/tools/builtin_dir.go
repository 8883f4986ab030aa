package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

type dirEntry struct {
	Name string `json:"name"`
	Type string `json:"type"` // file, dir, symlink or other
	Size int64  `json:"size,omitempty"`
}

type listDirOutput struct {
	Path      string     `json:"path"`
	Entries   []dirEntry `json:"entries"`
	Truncated bool       `json:"truncated"`
}

func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

func listDirTool(l Limits) Tool {
	return Tool{
		Name: "list_dir",
		Description: fmt.Sprintf("List a directory of the project: each entry's name, type (file, dir, symlink, other) and size. "+
			"At most %d entries, in name order; entries the policy hides are left out.", l.MaxEntries),
		InputSchema: []byte(`{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"directory relative to the project root (default \".\")"}},
			"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},
			"entries":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},
			"type":{"enum":["file","dir","symlink","other"]},"size":{"type":"integer"}},"required":["name","type"]}},
			"truncated":{"type":"boolean"}},"required":["path","entries","truncated"]}`),
		Safety: Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Path string `json:"path"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			if a.Path == "" {
				a.Path = "."
			}
			des, err := c.Sandbox.ReadDir(c.Name, a.Path)
			if err != nil {
				return nil, err
			}
			out := listDirOutput{Path: a.Path, Entries: make([]dirEntry, 0, min(len(des), l.MaxEntries))}
			for _, de := range des {
				if len(out.Entries) == l.MaxEntries {
					out.Truncated = true
					break
				}
				e := dirEntry{Name: de.Name(), Type: entryType(de.Type())}
				if e.Type == "file" {
					if fi, err := de.Info(); err == nil {
						e.Size = fi.Size()
					}
				}
				out.Entries = append(out.Entries, e)
			}
			return out, nil
		},
	}
}

type globOutput struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
}

func globTool(l Limits) Tool {
	return Tool{
		Name: "glob",
		Description: fmt.Sprintf("Find the project's files and directories whose path, relative to the root, matches a glob "+
			"(* within a name, ** across directories, ?, [abc], {a,b}); e.g. \"src/**/*.go\". Paths are matched after symlinks "+
			"are resolved; at most %d matches, in walk order.", l.MaxEntries),
		InputSchema: []byte(`{"type":"object","properties":{
			"pattern":{"type":"string","minLength":1,"description":"glob relative to the project root, e.g. \"**/*.md\""}},
			"required":["pattern"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{"matches":{"type":"array","items":{"type":"string"}},
			"truncated":{"type":"boolean"}},"required":["matches","truncated"]}`),
		Safety: Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Pattern string `json:"pattern"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			pattern := strings.TrimPrefix(path.Clean(a.Pattern), "./")
			if !doublestar.ValidatePattern(pattern) || strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") {
				return nil, Errorf(ReasonInvalidArgs, "glob: %q is not a valid pattern relative to the project root (e.g. \"src/**/*.go\")", a.Pattern)
			}
			// Walk only below the pattern's literal prefix.
			base, _ := doublestar.SplitPattern(pattern)
			if base == "" || strings.ContainsAny(base, `*?[{\`) {
				base = "."
			}
			out := globOutput{Matches: []string{}}
			err := c.Sandbox.WalkDir(c.Name, base, func(rel string, d fs.DirEntry, err error) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err != nil {
					c.Logf("skipped %s: %v", rel, err)
					return nil
				}
				if ok, _ := doublestar.Match(pattern, rel); !ok {
					return nil
				}
				if len(out.Matches) == l.MaxEntries {
					out.Truncated = true
					return fs.SkipAll
				}
				out.Matches = append(out.Matches, rel)
				return nil
			})
			if isNotFound(err) && base != "." {
				return out, nil // nothing under a missing prefix matches
			}
			if err != nil {
				return nil, err
			}
			return out, nil
		},
	}
}
