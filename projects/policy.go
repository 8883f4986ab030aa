package projects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/assets"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// Where a project's policy came from (StartedData.PolicySource).
const (
	PolicyFromRequest = "request" // the open request's "policy"
	PolicyDefault     = "default" // no policy given and no policy file
	// A policy read from <root>/<data dir>/policy.yaml is named by that
	// file, relative to the root (".jido/policy.yaml").
)

// PolicyFile is the policy file's name inside the data dir.
const PolicyFile = "policy.yaml"

// maxPolicyBytes bounds the policy file read at open.
const maxPolicyBytes = 256 << 10

// loadPolicy decides a project's policy: the request's (a JSON object in
// the form of the policy file: tools, paths, commands), else the data
// dir's policy.yaml read through the root (a link out of the root is
// refused like any tool's), else policy.Default. It returns the policy
// protecting dataDir, its document (the canonical JSON the agent's state
// keeps, from which a restart rebuilds the same policy) and its source.
func loadPolicy(root *policy.Root, dataDir string, given json.RawMessage) (*policy.Policy, json.RawMessage, string, error) {
	var (
		p      *policy.Policy
		source string
		err    error
	)
	switch {
	case len(bytes.TrimSpace(given)) > 0 && !bytes.Equal(bytes.TrimSpace(given), []byte("null")):
		if t := bytes.TrimSpace(given); t[0] != '{' {
			return nil, nil, "", bus.Errorf(bus.ReasonInvalidRequest, "policy: want an object such as {\"tools\":{\"*\":\"allow\"}}, got %.40s", t)
		}
		source = PolicyFromRequest
		// JSON is YAML: the one loader checks keys, modes and globs.
		p, err = policy.Load("policy", given)
	default:
		file := path.Join(dataDir, PolicyFile)
		data, rerr := readPolicyFile(root, dataDir)
		switch {
		case rerr == nil:
			source = file
			p, err = policy.Load(file, data)
		case errors.Is(rerr, fs.ErrNotExist):
			source, p = PolicyDefault, policy.Default()
		default:
			return nil, nil, "", bus.Errorf(typeOr(rerr, bus.ReasonInvalidRequest), "policy file %s in %s: %s", file, root.Path(), bus.AsError(rerr).Message)
		}
	}
	if err == nil {
		where := "the policy " + source
		if source == PolicyFromRequest {
			where = "the open request's policy"
		}
		err = refuseOldToolNames(p, where)
	}
	if err != nil {
		return nil, nil, "", err
	}
	doc, err := policyDocument(p)
	if err != nil {
		return nil, nil, "", err
	}
	return p.WithDataDir(dataDir), doc, source, nil
}

// readPolicyFile reads <dataDir>/policy.yaml through root. The file must
// be a regular file of the data dir, as an asset must: a symlink is
// refused, even one to a file inside the root, since the file tools may
// write that file (.jido is read-only to them, the rest of the root is
// not), and the policy follows the file's edits while the project is
// open. An error wrapping fs.ErrNotExist means there is no policy file.
func readPolicyFile(root *policy.Root, dataDir string) ([]byte, error) {
	file := path.Join(dataDir, PolicyFile)
	fi, err := root.Lstat(file)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "%s is a symlink; the policy must be a regular file inside %s, which the project's tools cannot change: replace the link with the file", file, dataDir)
	case !fi.Mode().IsRegular():
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "%s is not a regular file (%s); make it the policy's YAML, or remove it", file, fi.Mode().Type())
	case fi.Size() > maxPolicyBytes:
		return nil, bus.Errorf(bus.ReasonTooLarge, "%s is %d bytes, over the %d a policy file may be; a policy is a few lines", file, fi.Size(), maxPolicyBytes)
	}
	return root.ReadFile(file, maxPolicyBytes)
}

// policyFromDocument rebuilds the policy a project's state keeps.
func policyFromDocument(doc json.RawMessage, dataDir string) (*policy.Policy, error) {
	if len(bytes.TrimSpace(doc)) == 0 || bytes.Equal(bytes.TrimSpace(doc), []byte("{}")) {
		return policy.Default().WithDataDir(dataDir), nil
	}
	p, err := policy.LoadDocument("the project's stored policy", doc)
	if err == nil {
		err = refuseOldToolNames(p, "the project's stored policy (its policy when it was opened)")
	}
	if err != nil {
		return nil, err
	}
	return p.WithDataDir(dataDir), nil
}

// refuseOldToolNames refuses a policy whose tool globs name asset tools as
// they were named before assets.ToolName (command.*, skill_graph.search):
// such a glob matches nothing now, so a deny written with it would
// silently stop applying.
func refuseOldToolNames(p *policy.Policy, where string) error {
	var old []string
	for glob := range p.Tools {
		if now, ok := assets.RenamedTool(glob); ok {
			old = append(old, fmt.Sprintf("%q (now %q)", glob, now))
		}
	}
	if len(old) == 0 {
		return nil
	}
	slices.Sort(old)
	return bus.Errorf(bus.ReasonInvalidRequest, "%s: tools: %s name asset tools the old way, and would match no tool: asset tools are <kind>_<name> now (command_git-commit, skill_review, skill_graph_search); write the new names, then open the project again (jido-bus project close, then project open)", where, strings.Join(old, ", "))
}

// policyDocument writes p in the policy file's form, every key given
// (empty lists as [], so loading it back empties them again).
func policyDocument(p *policy.Policy) (json.RawMessage, error) {
	list := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	tools := map[string]string{}
	for glob, m := range p.Tools {
		tools[glob] = string(m)
	}
	commands := map[string]any{
		"programs":           list(p.Commands.Programs),
		"network":            p.Commands.Network,
		"limits":             limitsDocument(p.Commands.Limits),
		"without_landlock":   p.Commands.WithoutLandlock,
		"without_namespaces": p.Commands.WithoutNamespaces,
	}
	// A nil env passes every variable the operator allows (PATH among
	// them); an empty one passes none. Written as [], a policy that set
	// no env came back from the stored document after a restart passing
	// nothing, and run_command found no program by name.
	if p.Commands.Env != nil {
		commands["env"] = p.Commands.Env
	}
	doc := map[string]any{
		"tools": tools,
		"paths": map[string]any{
			"allow":           list(p.Paths.Allow),
			"deny":            list(p.Paths.Deny),
			"read_only":       list(p.Paths.ReadOnly),
			"read_hard_links": p.Paths.ReadHardLinks,
		},
		"commands": commands,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("policy document: %w", err)
	}
	return b, nil
}

// limitsDocument is the limits a policy sets, those it leaves to the
// defaults left out (so a later default or cap still applies to them).
func limitsDocument(l policy.Limits) map[string]any {
	doc := map[string]any{}
	for k, v := range map[string]int64{
		policy.LimitProcesses: int64(l.Processes), policy.LimitFileSize: int64(l.FileSize), policy.LimitDisk: int64(l.Disk),
		policy.LimitTempSize: int64(l.TempSize), policy.LimitCPU: int64(l.CPUSeconds), policy.LimitOutput: int64(l.Output),
	} {
		if v != 0 {
			doc[k] = v
		}
	}
	return doc
}

// typeOr is err's type when it carries one, else fallback.
func typeOr(err error, fallback string) string {
	if _, ok := errors.AsType[*bus.Error](err); ok {
		return bus.ErrorType(err)
	}
	return fallback
}
