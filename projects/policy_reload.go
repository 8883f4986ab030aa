package projects

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// PolicyReload is what a check of a project's policy file found
// (ReloadResult.Policy).
type PolicyReload struct {
	// Source is where the policy in force after the check came from.
	Source string `json:"source"`
	// Changed is true when the check changed the policy (recorded as
	// project.policy.changed); Changes say how, a line per setting.
	Changed bool     `json:"changed"`
	Changes []string `json:"changes,omitempty"`
	// Refused is why the file was not taken (the policy in force stays,
	// project.policy.refused records it once).
	Refused string `json:"refused,omitempty"`
	// Ignored is why the file is not read at all: the project was opened
	// with a policy in its request, which the file does not override.
	Ignored string `json:"ignored,omitempty"`
}

// reloadPolicy reads project p's policy file again and makes what it says
// the policy p's tools run under, as Open would have: the file, or the
// defaults when there is none. The change is committed to the project's
// stream (project.policy.changed, which the agent's state keeps for a
// restart) before any call runs under it; a call already running finishes
// under the policy it started with.
//
// It never falls open. A file that does not load, asks for more than the
// node's operator allows, is a symlink, or may have been written by the
// project's own commands (on a node where they can write .jido) is
// refused: the policy in force stays, the refusal is recorded once per
// reason (project.policy.refused) and listed among the project's
// diagnostics until the file is fixed. A project opened with a policy in
// its request does not follow the file: the operator's word wins over
// the repository's. The error is a failure to record (nothing changed
// then; the next check tries again).
func (e *Engine) reloadPolicy(ctx context.Context, p *project) (PolicyReload, error) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	cur := p.policySource
	if cur == PolicyFromRequest {
		return PolicyReload{Source: cur, Ignored: fmt.Sprintf("the project was opened with a policy in its request, which %s does not override; close the project and open it without one to follow the file",
			path.Join(p.dataDir, PolicyFile))}, nil
	}
	box := p.box()
	var (
		pol    *policy.Policy
		doc    json.RawMessage
		source string
	)
	err := dataDirPresent(box.Root, p.dataDir)
	if err == nil {
		pol, doc, source, err = loadPolicy(box.Root, p.dataDir, nil)
	}
	if err == nil {
		err = e.cfg.CommandEnv.Check(pol)
	}
	if err == nil {
		// Removing the file is an edit too: the defaults may allow more.
		err = commandsMayWrite(policy.Protection(), box, p.dataDir)
	}
	if err != nil {
		reason := bus.AsError(err).Message
		if reason != p.refused {
			d := PolicyRefusedData{File: path.Join(p.dataDir, PolicyFile), Reason: reason, PolicySource: cur}
			if err := e.send(ctx, p.id, TypePolicyRefused, d); err != nil {
				return PolicyReload{Source: cur, Refused: reason}, fmt.Errorf("project %s: record %s: %w", p.id, TypePolicyRefused, err)
			}
			p.refused = reason
		}
		return PolicyReload{Source: cur, Refused: reason}, nil
	}
	changes, err := policyChanges(p.policyDoc, doc)
	if err != nil {
		return PolicyReload{Source: cur}, fmt.Errorf("project %s: %w", p.id, err)
	}
	p.refused = ""
	if len(changes) == 0 && source == cur {
		return PolicyReload{Source: cur}, nil
	}
	if len(changes) > maxListedChanges {
		// The policy itself is in the entry; the list is for a person.
		changes = append(changes[:maxListedChanges:maxListedChanges], fmt.Sprintf("... and %d more", len(changes)-maxListedChanges))
	}
	d := PolicyData{Policy: doc, PolicySource: source, PreviousSource: cur, Changes: changes}
	if d.Changes == nil {
		d.Changes = []string{}
	}
	// Committed first, then used: no call runs under a policy the
	// stream has not heard of.
	if err := e.send(ctx, p.id, TypePolicyChanged, d); err != nil {
		return PolicyReload{Source: cur}, fmt.Errorf("project %s: record %s: %w", p.id, TypePolicyChanged, err)
	}
	p.runner.SetSandbox(e.sandbox(box.Root, pol))
	p.policyDoc, p.policySource = doc, source
	return PolicyReload{Source: source, Changed: true, Changes: changes}, nil
}

// dataDirPresent refuses to read the policy file of a data dir that is
// gone (moved away, removed by a checkout or a clean): its policy file
// is missing with it, and the defaults it would mean are not what anyone
// asked for. The file is read again once the folder is back.
func dataDirPresent(root *policy.Root, dataDir string) error {
	fi, err := root.Lstat(dataDir)
	switch {
	case err != nil:
		return bus.Errorf(typeOr(err, bus.ReasonUnavailable), "the data dir %s cannot be read (%s): the policy in force stays until it is back", dataDir, bus.AsError(err).Message)
	case !fi.IsDir():
		return bus.Errorf(bus.ReasonInvalidRequest, "the data dir %s is no longer a folder: the policy in force stays until it is one again", dataDir)
	}
	return nil
}

// maxListedChanges bounds the changes a policy change lists, so that a
// policy file of many entries does not make its entry too large to
// commit.
const maxListedChanges = 100

// policyDiagnostic is the diagnostic of a refused policy file, listed
// with the assets' ("policy.yaml", relative to the data dir as theirs
// are), or nil.
func (p *project) policyDiagnostic() *assets.Diagnostic {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	if p.refused == "" {
		return nil
	}
	return &assets.Diagnostic{File: PolicyFile, Reason: fmt.Sprintf("not taken: %s; the project keeps its policy (%s) until the file is fixed", p.refused, p.policySource)}
}

// logPolicy logs what a check of project id's policy file did.
func (e *Engine) logPolicy(id string, r PolicyReload) {
	switch {
	case r.Changed:
		e.log.Info("project policy changed", "project", id, "policy", r.Source, "changes", strings.Join(r.Changes, "; "))
	case r.Refused != "":
		e.log.Warn("project policy file refused; the policy in force stays", "project", id, "policy", r.Source, "reason", r.Refused)
	}
}

// commandsMayWrite refuses a policy file that the project's own commands
// may have written: on a node without user namespaces, a project whose
// policy (the one in force, under which they ran) lets run_command run
// with weaker confinement (without_namespaces: warn, allowed by the
// operator) has commands that can write .jido, and following the file
// would let them loosen their own policy. A person applies such an edit
// by closing and opening the project.
func commandsMayWrite(c policy.Confinement, box *policy.Sandbox, dataDir string) error {
	pol := box.Policy
	if c.Namespaces || len(pol.Commands.Programs) == 0 || pol.Commands.WithoutNamespaces != "warn" ||
		box.Host == nil || !box.Host.AllowWeaker || !pol.Visible("run_command") {
		return nil
	}
	return bus.Errorf(policy.ReasonDenied, "this project's commands can write %s on this node (no user namespaces, and its policy says commands.without_namespaces: warn), "+
		"so an edit of %s may be theirs and is not followed while the project is open; check the file, then close the project and open it again to apply it",
		dataDir, path.Join(dataDir, PolicyFile))
}

// policyChanges lists, a line per setting, how policy document next
// differs from prev: "tools.run_command: allow -> ask", "(none)" for a
// setting one of them lacks. Lists and values are shown as JSON.
func policyChanges(prev, next json.RawMessage) ([]string, error) {
	flat := func(doc json.RawMessage) (map[string]string, error) {
		out := map[string]string{}
		if len(doc) == 0 {
			return out, nil
		}
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("policy document: %w", err)
		}
		flatten("", v, out)
		return out, nil
	}
	a, err := flat(prev)
	if err != nil {
		return nil, err
	}
	b, err := flat(next)
	if err != nil {
		return nil, err
	}
	var changes []string
	for k, v := range b {
		if old, ok := a[k]; !ok {
			changes = append(changes, fmt.Sprintf("%s: (none) -> %s", k, v))
		} else if old != v {
			changes = append(changes, fmt.Sprintf("%s: %s -> %s", k, old, v))
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			changes = append(changes, fmt.Sprintf("%s: %s -> (none)", k, v))
		}
	}
	sort.Strings(changes)
	return changes, nil
}

// flatten puts each leaf of v in out under its dotted key; a leaf is a
// value that is not an object (a list is one leaf), and an empty object
// has none (limits: {} sets nothing).
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, sub := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, sub, out)
		}
		return
	}
	if s, ok := v.(string); ok {
		out[prefix] = s
		return
	}
	b, _ := json.Marshal(v) // decoded from JSON: encodes again
	out[prefix] = string(b)
}
