package mcp

import (
	"context"
	"slices"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// maxCompletion is the most values one completion/complete answer holds
// (the protocol's bound).
const maxCompletion = 100

// complete answers completion/complete. A prompt's arguments complete to
// the project's paths (a command's arguments are mostly files; "arguments"
// completes its last word), as its list_dir would show them; a resource
// template's variables to what exists: {project} to the open projects,
// a skill's {name} to the skills, a note's {+id} to the notes, an
// artifact's {+id} to the artifacts this server's results named. An
// unknown prompt, template or argument has no values. Completions are not
// recorded in the project's stream: a client asks at every keystroke.
func (s *server) complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := req.Params
	var values []string
	more := false
	if p != nil && p.Ref != nil {
		var args map[string]string
		if p.Context != nil {
			args = p.Context.Arguments
		}
		switch p.Ref.Type {
		case "ref/prompt":
			values, more = s.completePrompt(p.Ref.Name, p.Argument.Name, p.Argument.Value)
		case "ref/resource":
			values = s.completeTemplate(p.Ref.URI, p.Argument.Name, p.Argument.Value, args)
		}
	}
	if len(values) > maxCompletion {
		values, more = values[:maxCompletion], true
	}
	if values == nil {
		values = []string{}
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values, HasMore: more}}, nil
}

// completePrompt completes argument arg of prompt name with value typed
// so far.
func (s *server) completePrompt(name, arg, value string) ([]string, bool) {
	project, command := s.project, name
	if project == "" {
		var ok bool
		if project, command, ok = strings.Cut(name, "."); !ok {
			return nil, false
		}
	}
	rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindCommand, Name: command})
	if err != nil {
		return nil, false
	}
	c, ok := rep.Asset.(*assets.Command)
	if !ok {
		return nil, false
	}
	named, positional := c.Arguments()
	head, word := "", value
	switch {
	case arg == positionalArg && positional:
		// The arguments are words: the last one is being typed.
		if i := strings.LastIndexAny(value, " \t"); i >= 0 {
			head, word = value[:i+1], value[i+1:]
		}
	case !slices.Contains(named, arg):
		return nil, false
	}
	paths, more, err := s.g.h.CompletePath(project, word)
	if err != nil {
		return nil, false
	}
	for i := range paths {
		paths[i] = head + paths[i]
	}
	return paths, more
}

// completeTemplate completes variable arg of resource template uri.
func (s *server) completeTemplate(uri, arg, value string, known map[string]string) []string {
	rest, ok := strings.CutPrefix(uri, scheme)
	if !ok {
		return nil
	}
	project, rest, _ := strings.Cut(rest, "/")
	kind, _, _ := strings.Cut(rest, "/")
	if project == "{project}" {
		if arg == "project" {
			return withPrefix(s.projectIDs(), value)
		}
		project = known["project"]
	}
	if project == "" || s.project != "" && project != s.project {
		return nil
	}
	switch {
	case kind == "skills" && arg == "name":
		rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindSkill})
		if err != nil {
			return nil
		}
		var names []string
		for _, sk := range rep.Skills {
			names = append(names, sk.Name)
		}
		return withPrefix(names, value)
	case kind == "notes" && arg == "id":
		rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindNote})
		if err != nil {
			return nil
		}
		return withPrefix(rep.Notes, value)
	case kind == "artifacts" && arg == "id":
		return withPrefix(s.artifacts.ids(project), value)
	}
	return nil
}

// withPrefix is the values that start with prefix, sorted.
func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
