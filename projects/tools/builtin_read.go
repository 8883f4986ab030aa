package tools

import (
	"bytes"
	"context"
	"fmt"
	"unicode/utf8"
)

type readFileArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

type readFileOutput struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
}

func (o readFileOutput) OutputText() string { return o.Content }

func readFileTool(l Limits) Tool {
	return Tool{
		Name: "read_file",
		Description: fmt.Sprintf("Read a UTF-8 text file of the project, whole or a range of lines (1-based, inclusive). "+
			"Files over %d bytes are refused. The path is relative to the project root.", l.MaxFileBytes),
		InputSchema: []byte(`{"type":"object","properties":{
			"path":{"type":"string","minLength":1,"description":"file path relative to the project root"},
			"start_line":{"type":"integer","minimum":1,"description":"first line to return (default 1)"},
			"end_line":{"type":"integer","minimum":1,"description":"last line to return (default the last)"}},
			"required":["path"],"additionalProperties":false}`),
		OutputSchema: []byte(`{"type":"object","properties":{
			"path":{"type":"string"},"content":{"type":"string"},
			"start_line":{"type":"integer"},"end_line":{"type":"integer"},"total_lines":{"type":"integer"}},
			"required":["path","content","start_line","end_line","total_lines"]}`),
		TextField: "content",
		Safety:    Safety{Reads: true},
		Func: func(ctx context.Context, c *Call) (any, error) {
			var a readFileArgs
			if err := decodeArgs(c, &a); err != nil {
				return nil, err
			}
			data, err := c.Sandbox.ReadFile(c.Name, a.Path, l.MaxFileBytes)
			if err != nil {
				return nil, err
			}
			if !utf8.Valid(data) {
				return nil, Errorf(ReasonNotText, "%s is not UTF-8 text (a binary file?); read_file returns text only", a.Path)
			}
			return lineRange(a, data)
		},
	}
}

// lineRange cuts data to the requested lines. A file's lines end in '\n';
// a last line without one still counts.
func lineRange(a readFileArgs, data []byte) (readFileOutput, error) {
	total := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	out := readFileOutput{Path: a.Path, StartLine: 1, EndLine: total, TotalLines: total}
	if a.StartLine == 0 && a.EndLine == 0 {
		out.Content = string(data)
		return out, nil
	}
	start, end := max(a.StartLine, 1), a.EndLine
	if end == 0 || end > total {
		end = total
	}
	if start > total && total > 0 || start > end && total > 0 {
		return out, Errorf(ReasonInvalidArgs, "%s has %d lines; lines %d to %d are not in it", a.Path, total, start, a.EndLine)
	}
	// Find the byte offsets of line start and the end of line end.
	from, to, line := 0, len(data), 1
	for i, b := range data {
		if b != '\n' {
			continue
		}
		line++
		if line == start {
			from = i + 1
		}
		if line == end+1 {
			to = i + 1
			break
		}
	}
	out.Content, out.StartLine, out.EndLine = string(data[from:to]), start, end
	return out, nil
}
