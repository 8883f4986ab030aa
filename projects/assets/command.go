package assets

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// Command is a slash command: commands/**/*.md, sub-folders as
// namespaces (commands/git/commit.md is "git:commit"), optional front
// matter, and a body that Expand fills from call arguments. Unlike a
// skill's, a command's body is held: it is expanded on every call and
// is capped by Options.MaxFileSize.
//
// A Command is immutable.
type Command struct {
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	WhenToUse    string   `json:"when_to_use,omitempty"`
	ArgumentHint string   `json:"argument_hint,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	Model        string   `json:"model,omitempty"`
	// DisableModelInvocation is Claude Code's disable-model-invocation:
	// its author meant it for people only. It is shown, not enforced: a
	// project's policy says which tools a model may call (tools:
	// {command_<name>: ask} or deny).
	DisableModelInvocation bool   `json:"disable_model_invocation,omitempty"`
	Body                   string `json:"-"`
	Source                 Source `json:"source"`
	BodyLine               int    `json:"body_line"`
}

// commandFrontMatter is a command's front matter: Claude Code's slash
// command keys (description, argument-hint, allowed-tools, model), the
// keys it shares with skills (agentKeys, and name, which a command's file
// name decides here), and skills, the skills a command of a Claude Code
// plugin names.
type commandFrontMatter struct {
	Description  string    `yaml:"description"`
	ArgumentHint string    `yaml:"argument-hint"`
	AllowedTools toolList  `yaml:"allowed-tools"`
	Model        string    `yaml:"model"`
	Name         any       `yaml:"name"`
	Skills       any       `yaml:"skills"`
	Agent        agentKeys `yaml:",inline"`
}

// loadCommands walks commands/ to maxWalkDepth folders. Every *.md file
// is a command; other files are not commands and are skipped, hidden
// files and folders too. Names are compared case-insensitively for
// duplicates ("Deploy.md" and "deploy.md" would be one file on macOS and
// are two near-identical tools to a model): both are refused.
func (l *loader) loadCommands() []named {
	var claims []named
	l.walkMarkdown("commands", func(rel string, fi fs.FileInfo) {
		r := l.file(rel, fi, parseCommand)
		if r.asset != nil {
			// Compared as the tool's name: git:commit and git-commit
			// would be one tool.
			tool := ToolName(KindCommand, r.name)
			claims = append(claims, named{key: strings.ToLower(tool), name: r.name, tool: tool, rel: rel, asset: r.asset})
		}
	})
	return claims
}

// walkMarkdown walks top (a kind's folder) to maxWalkDepth folders and
// calls visit with every *.md entry that is not a folder and its Lstat;
// visit hands it to l.file, which refuses symlinks and other non-regular
// files. Hidden files and folders are skipped; symlinked folders are not
// followed (one could loop or leave the data dir). The walk shares one
// MaxFilesPerKind budget and says so when it runs out.
func (l *loader) walkMarkdown(top string, visit func(rel string, fi fs.FileInfo)) {
	budget := l.opts.MaxFilesPerKind
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		var inner error
		_, err := l.readDir(dir, &budget, func(e fs.DirEntry) {
			if inner != nil || hidden(e.Name()) {
				return
			}
			rel := dir + "/" + e.Name()
			switch {
			case e.IsDir():
				if depth >= maxWalkDepth {
					l.diag(rel, 0, "is nested deeper than %d folders under %s/; it is not loaded", maxWalkDepth, top)
					return
				}
				inner = walk(rel, depth+1)
			case strings.HasSuffix(e.Name(), ".md"):
				if !utf8.ValidString(rel) {
					l.diag(strings.ToValidUTF8(rel, "\uFFFD"), 0, "file name is not UTF-8: rename the file")
					return
				}
				fi, err := l.fs.lstat(rel)
				if err != nil {
					l.diag(rel, 0, "cannot be read: %v", err)
					return
				}
				visit(rel, fi)
			}
		})
		if inner != nil {
			return inner
		}
		return err
	}
	err := walk(top, 1)
	if errors.Is(err, errTooMany) {
		l.tooMany(top)
	} else if err != nil {
		l.diag(top, 0, "cannot be listed: %v", err)
	}
}

// commandName maps commands/a/b/c.md to "a:b:c", or says why it cannot:
// each part must be 1+ letters, digits, '_' or '-' so the name can become
// a tool name.
func commandName(rel string) (string, string) {
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(rel, "commands/"), ".md"), "/")
	for _, p := range parts {
		if p == "" {
			return "", "has an empty name: name the file <name>.md"
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return "", fmt.Sprintf("name part %q holds %q: use only letters, digits, '_' and '-' in command file and folder names", p, r)
			}
		}
	}
	return strings.Join(parts, ":"), ""
}

func parseCommand(rel string, data []byte, src Source) (string, any, []Diagnostic) {
	bad := func(line int, format string, args ...any) (string, any, []Diagnostic) {
		return "", nil, []Diagnostic{{File: rel, Line: line, Reason: fmt.Sprintf(format, args...)}}
	}
	name, why := commandName(rel)
	if why != "" {
		return bad(0, "%s", why)
	}
	fm, err := splitFrontMatter(data)
	if err != nil {
		var fe *frontMatterError
		errors.As(err, &fe)
		return bad(fe.Line, "%s", fe.Reason)
	}
	var m commandFrontMatter
	if err := decodeFrontMatter(fm, &m); err != nil {
		var fe *frontMatterError
		if errors.As(err, &fe) {
			reason := fe.Reason
			if strings.Contains(reason, "unknown field") {
				reason += " (a command's front matter holds description, argument-hint, allowed-tools, model, name, skills and Claude Code's " + agentKeyList + ")"
			}
			return bad(fe.Line, "%s", reason)
		}
		return bad(fm.yamlLine, "%v", err)
	}
	return name, &Command{
		Name:                   name,
		Description:            m.Description,
		WhenToUse:              m.Agent.WhenToUse,
		ArgumentHint:           m.ArgumentHint,
		AllowedTools:           []string(m.AllowedTools),
		Model:                  m.Model,
		DisableModelInvocation: m.Agent.DisableModelInvocation,
		Body:                   string(fm.body),
		Source:                 src,
		BodyLine:               fm.bodyLine,
	}, nil
}
