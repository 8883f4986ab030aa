package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assets"
)

// Resource URIs: jido://<project>/skills/<name>, jido://<project>/notes/<id>
// (each segment of the note's id path-escaped), jido://<project>/artifacts/<id>.
const scheme = "jido://"

type resourceDef struct {
	resource    *sdk.Resource
	fingerprint string
}

func skillURI(project, name string) string {
	return scheme + project + "/skills/" + url.PathEscape(name)
}

func noteURI(project, id string) string {
	segs := strings.Split(id, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return scheme + project + "/notes/" + strings.Join(segs, "/")
}

func artifactURI(project, id string) string {
	return scheme + project + "/artifacts/" + url.PathEscape(id)
}

// templates are s's resource templates: one project's, or every
// project's with {project}.
func (s *server) templates() []*sdk.ResourceTemplate {
	p := s.project
	if p == "" {
		p = "{project}"
	}
	return []*sdk.ResourceTemplate{
		{Name: "skill", URITemplate: scheme + p + "/skills/{name}", MIMEType: "text/markdown", Description: "A skill's SKILL.md body, by the skill's name."},
		{Name: "note", URITemplate: scheme + p + "/notes/{+id}", MIMEType: "text/markdown", Description: "A skill-graph note, by its id (its path below skill_graph, without .md)."},
		{Name: "artifact", URITemplate: scheme + p + "/artifacts/{+id}", Description: "The whole output of a tool call, named by a resource_link of its result."},
	}
}

// projectResources adds project's skills and notes to into.
func (s *server) projectResources(project string, into map[string]resourceDef) {
	rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project})
	if err != nil {
		return
	}
	for _, sk := range rep.Skills {
		r := &sdk.Resource{URI: skillURI(project, sk.Name), Name: s.qualify(project, "skill."+sk.Name), Description: sk.Description, MIMEType: "text/markdown"}
		into[r.URI] = resourceDef{resource: r, fingerprint: fingerprint(r)}
	}
	for _, id := range rep.Notes {
		r := &sdk.Resource{URI: noteURI(project, id), Name: s.qualify(project, "note."+id), MIMEType: "text/markdown"}
		into[r.URI] = resourceDef{resource: r, fingerprint: fingerprint(r)}
	}
}

// readResource reads a skill's body, a note or an artifact.
func (s *server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	start := time.Now()
	uri := req.Params.URI
	project, kind, name, ok := parseURI(uri)
	if !ok || (s.project != "" && project != s.project) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if _, err := s.g.h.ToolDetails(project); err != nil {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	text, mime, err := s.resourceText(project, kind, name)
	err = s.record(ctx, req, project, "resources/read", uri, start, err)
	if bus.ErrorType(err) == bus.ReasonNotFound {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
}

func (s *server) resourceText(project, kind, name string) (text, mime string, err error) {
	switch kind {
	case "skills":
		rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindSkill, Name: name})
		if err != nil {
			return "", "", err
		}
		sk, ok := rep.Asset.(*assets.Skill)
		if !ok {
			return "", "", bus.Errorf(bus.ReasonNotFound, "project %s has no skill %q", project, name)
		}
		body, err := sk.Body()
		if errors.Is(err, assets.ErrChanged) {
			return "", "", bus.Errorf(bus.ReasonUnavailable, "skill %s changed on disk since it was loaded: read it again after the reload", name)
		}
		return body, "text/markdown", err
	case "notes":
		rep, err := s.g.h.Assets(projects.AssetsRequest{Project: project, Kind: projects.KindNote, Name: name})
		if err != nil {
			return "", "", err
		}
		n, ok := rep.Asset.(assets.Node)
		if !ok {
			return "", "", bus.Errorf(bus.ReasonNotFound, "project %s has no note %q", project, name)
		}
		return n.Text, "text/markdown", nil
	case "artifacts":
		media, ok := s.artifacts.get(project, name)
		if !ok {
			return "", "", bus.Errorf(bus.ReasonNotFound, "artifact %s was not named by a tool result of project %s on this server", name, project)
		}
		data, err := s.g.h.Artifact(name)
		if err != nil {
			return "", "", err
		}
		return string(data), media, nil
	}
	return "", "", bus.Errorf(bus.ReasonNotFound, "no resource kind %q", kind)
}

// parseURI splits jido://<project>/<kind>/<name>, unescaping name.
func parseURI(uri string) (project, kind, name string, ok bool) {
	rest, ok := strings.CutPrefix(uri, scheme)
	if !ok {
		return "", "", "", false
	}
	project, rest, ok1 := strings.Cut(rest, "/")
	kind, rest, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 || project == "" || rest == "" {
		return "", "", "", false
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return "", "", "", false
	}
	return project, kind, name, true
}

// maxIssued bounds the artifacts a server remembers having named.
const maxIssued = 4096

// issued are the artifacts a server's results named, by project, with the
// media type their links gave: only those are readable through it (an
// artifact id alone, from a log, does not open another project's
// outputs), and resources/read gives each the type its link said. The
// oldest are forgotten first.
type issued struct {
	mu    sync.Mutex
	max   int
	order []string
	media map[string]string
}

func newIssued(max int) *issued { return &issued{max: max, media: map[string]string{}} }

func (i *issued) add(project, id, mediaType string) {
	k := project + "\x00" + id
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, ok := i.media[k]; ok {
		i.media[k] = mediaType
		return
	}
	if len(i.order) == i.max {
		delete(i.media, i.order[0])
		i.order = i.order[1:]
	}
	i.order = append(i.order, k)
	i.media[k] = mediaType
}

// get is the media type artifact id of project was named with.
func (i *issued) get(project, id string) (string, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	m, ok := i.media[project+"\x00"+id]
	return m, ok
}

// ids are project's artifacts named so far, oldest first.
func (i *issued) ids(project string) []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []string
	for _, k := range i.order {
		if p, id, _ := strings.Cut(k, "\x00"); p == project {
			out = append(out, id)
		}
	}
	return out
}
