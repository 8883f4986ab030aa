package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/jido-bus/jido-bus/bus"
)

// file is the YAML form of a Policy. Pointers tell a key left out (the
// default holds) from a key given empty (the list is emptied).
type file struct {
	Tools map[string]Mode `yaml:"tools"`
	Paths struct {
		Allow         *[]string `yaml:"allow"`
		Deny          *[]string `yaml:"deny"`
		ReadOnly      *[]string `yaml:"read_only"`
		ReadHardLinks *bool     `yaml:"read_hard_links"`
	} `yaml:"paths"`
	Commands struct {
		Programs *[]string `yaml:"programs"`
		Env      *[]string `yaml:"env"`
		Network  *bool     `yaml:"network"`
		Limits   struct {
			Processes  *int  `yaml:"processes"`
			FileSize   *Size `yaml:"file_size"`
			Disk       *Size `yaml:"disk"`
			TempSize   *Size `yaml:"temp_size"`
			CPUSeconds *int  `yaml:"cpu_seconds"`
			Output     *Size `yaml:"output"`
		} `yaml:"limits"`
		WithoutLandlock   *string `yaml:"without_landlock"`
		WithoutNamespaces *string `yaml:"without_namespaces"`
	} `yaml:"commands"`
}

// Load reads a policy from YAML, as a project's .jido/policy.yaml or the
// policy given at project open says it; name (a file name, or "policy")
// prefixes its errors. Keys left out keep Default's value. The tools map
// is laid over the default one ("*": allow): a map naming run_command
// alone leaves every other tool allowed. "*" is the mode of the tools no
// other entry names, so an allow-list says "*": deny and allows the tools
// it lists. An allow entry in a map without "*" would change nothing (the
// default allows every tool): it is refused, since a map written as an
// allow-list before maps were laid over the default would otherwise allow
// every tool. Unknown keys are refused with their line; bad modes and
// globs name the glob.
//
//	tools:            # tool-name glob -> allow | deny | ask
//	  "*": allow
//	  run_command: ask
//	paths:            # doublestar globs on the resolved path
//	  allow: ["**"]
//	  deny: ["**/.env", "**/.env.*"]
//	  read_only: ["vendor/**"]   # .jido and .git are always read-only
//	  read_hard_links: false     # files with other hard links are never written; read only if true
//	commands:
//	  programs: [go, git, make]  # base names, looked up on PATH
//	  env: [PATH, LANG, LC_ALL, TERM, TZ]
//	  network: false
//	  limits:                    # per call; at most the node's caps
//	    processes: 2048          # processes and threads at once
//	    file_size: 1GiB          # each file written
//	    disk: 8GiB               # all files written outside /tmp together
//	    temp_size: 1GiB          # the private /tmp
//	    cpu_seconds: 3600        # all its processes together
//	    output: 8MiB             # stdout and stderr kept
//	  without_landlock: refuse   # or warn, where the node's operator allows it
//	  without_namespaces: refuse # or warn, where the node's operator allows it
func Load(name string, data []byte) (*Policy, error) { return decode(name, data, true) }

// LoadDocument reads a policy document as the engine keeps it in a
// project's state (every key given, as policyDocument writes it): its
// tools map is taken whole. A document written before tools maps were
// laid over the default one thus keeps the allow-list it held.
func LoadDocument(name string, data []byte) (*Policy, error) { return decode(name, data, false) }

func decode(name string, data []byte, overlay bool) (*Policy, error) {
	var f file
	if err := yaml.UnmarshalWithOptions(data, &f, yaml.DisallowUnknownField()); err != nil {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "%s: %s", name, yamlMessage(err))
	}
	p := Default()
	switch {
	case f.Tools == nil:
	case overlay:
		for glob, m := range f.Tools {
			p.Tools[glob] = m
		}
	default:
		p.Tools = f.Tools
	}
	set(&p.Paths.Allow, f.Paths.Allow)
	set(&p.Paths.Deny, f.Paths.Deny)
	set(&p.Paths.ReadOnly, f.Paths.ReadOnly)
	set(&p.Paths.ReadHardLinks, f.Paths.ReadHardLinks)
	set(&p.Commands.Programs, f.Commands.Programs)
	set(&p.Commands.Env, f.Commands.Env)
	set(&p.Commands.Network, f.Commands.Network)
	set(&p.Commands.Limits.Processes, f.Commands.Limits.Processes)
	set(&p.Commands.Limits.FileSize, f.Commands.Limits.FileSize)
	set(&p.Commands.Limits.Disk, f.Commands.Limits.Disk)
	set(&p.Commands.Limits.TempSize, f.Commands.Limits.TempSize)
	set(&p.Commands.Limits.CPUSeconds, f.Commands.Limits.CPUSeconds)
	set(&p.Commands.Limits.Output, f.Commands.Limits.Output)
	set(&p.Commands.WithoutLandlock, f.Commands.WithoutLandlock)
	set(&p.Commands.WithoutNamespaces, f.Commands.WithoutNamespaces)
	err := p.validate()
	if err == nil && overlay {
		err = refuseRedundantAllows(f.Tools)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// refuseRedundantAllows refuses a tools map with allow entries and no
// "*": laid over the default "*": allow, they change nothing, and such a
// map is most likely an allow-list written when a map replaced the
// default one, which would now allow every tool.
func refuseRedundantAllows(tools map[string]Mode) error {
	if _, ok := tools[CatchAll]; ok {
		return nil
	}
	var allows []string
	for glob, m := range tools {
		if m == ModeAllow {
			allows = append(allows, fmt.Sprintf("%q", glob))
		}
	}
	if len(allows) == 0 {
		return nil
	}
	slices.Sort(allows)
	return bus.Errorf(bus.ReasonInvalidRequest, "tools: %s: allow changes nothing here: the tools map is laid over the default \"*\": allow, "+
		"so every tool no entry names is allowed already; to allow only the tools listed, add \"*\": deny (the mode of the tools no other entry names); "+
		"otherwise remove the allow entries", strings.Join(allows, ", "))
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// yamlMessage is goccy's one-line "[line:col] reason", without the source
// excerpt it prints below.
func yamlMessage(err error) string {
	msg := yaml.FormatError(err, false, false)
	first, _, _ := strings.Cut(msg, "\n")
	return strings.TrimSpace(first)
}
