package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/policy"
)

type writeOutput struct {
	Path         string `json:"path"`
	Bytes        int    `json:"bytes"`
	Replacements int    `json:"replacements,omitempty"`
}

const writeOutputSchema = `{"type":"object","properties":{"path":{"type":"string"},"bytes":{"type":"integer"},
	"replacements":{"type":"integer"}},"required":["path","bytes"]}`

func writeFileTool() Tool {
	return Tool{
		Name: "write_file",
		Description: "Write a text file of the project, creating it and its missing directories or replacing its content. " +
			"The .jido and .git folders are read-only.",
		InputSchema: []byte(`{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"file path relative to the project root"},
			"content":{"type":"string","description":"the file's whole new content"}},
			"required":["path","content"],"additionalProperties":false}`),
		OutputSchema: []byte(writeOutputSchema),
		Safety:       Safety{Writes: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			if err := c.writeFile(a.Path, []byte(a.Content)); err != nil {
				return nil, err
			}
			return writeOutput{Path: a.Path, Bytes: len(a.Content)}, nil
		},
	}
}

func editFileTool(l Limits) Tool {
	return Tool{
		Name: "edit_file",
		Description: "Replace an exact string in a text file of the project. old_string must occur exactly once " +
			"(include surrounding lines to make it unique) unless replace_all is true; it fails when old_string is not found.",
		InputSchema: []byte(`{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"file path relative to the project root"},
			"old_string":{"type":"string","minLength":1,"description":"the exact text to replace"},
			"new_string":{"type":"string","description":"the text to put in its place"},
			"replace_all":{"type":"boolean","description":"replace every occurrence (default false)"}},
			"required":["path","old_string","new_string"],"additionalProperties":false}`),
		OutputSchema: []byte(writeOutputSchema),
		Safety:       Safety{Reads: true, Writes: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a struct {
				Path       string `json:"path"`
				Old        string `json:"old_string"`
				New        string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			}
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			// Authorize the write before reading, so a read-only file is
			// refused as such rather than after a pointless read.
			rel, err := c.Sandbox.Root.Resolve(a.Path)
			if err != nil {
				return nil, err
			}
			if err := c.Sandbox.Policy.Authorize(c.Name, policy.OpWrite, rel); err != nil {
				return nil, err
			}
			data, err := c.Sandbox.ReadFile(c.Name, a.Path, l.MaxFileBytes)
			if err != nil {
				return nil, err
			}
			text := string(data)
			if !utf8.ValidString(text) {
				return nil, Errorf(ReasonNotText, "%s is not UTF-8 text; edit_file edits text only", a.Path)
			}
			n := strings.Count(text, a.Old)
			switch {
			case n == 0:
				return nil, Errorf(ReasonNoMatch, "%s does not contain old_string; read the file and copy the text exactly (whitespace included)", a.Path)
			case n > 1 && !a.ReplaceAll:
				return nil, &Error{Type: ReasonMultipleMatches, Message: fmt.Sprintf("%s contains old_string %d times; add surrounding lines to make it unique, or set replace_all", a.Path, n), Details: map[string]int{"matches": n}}
			}
			if !a.ReplaceAll {
				n = 1
			}
			text = strings.Replace(text, a.Old, a.New, n)
			if err := c.writeFile(a.Path, []byte(text)); err != nil {
				return nil, err
			}
			return writeOutput{Path: a.Path, Bytes: len(text), Replacements: n}, nil
		},
	}
}

func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, &bus.Error{Type: bus.ReasonNotFound})
}
