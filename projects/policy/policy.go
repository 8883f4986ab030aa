package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/jido-bus/jido-bus/bus"
)

// Op is what a tool call does to its path.
type Op int

const (
	OpRead  Op = iota // reads or lists the path
	OpWrite           // creates, changes or removes the path
	OpRun             // runs a program with the path as its working directory
)

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpRun:
		return "run"
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// CatchAll is the tools glob whose mode is that of every tool no other
// glob of a policy matches.
const CatchAll = "*"

// Mode is a tool's mode: allowed, denied, or allowed once a person approves.
type Mode string

const (
	ModeAllow Mode = "allow"
	ModeDeny  Mode = "deny"
	ModeAsk   Mode = "ask"
)

// Policy is a project's sandbox rules. The zero value denies every tool;
// start from Default or Load. A Policy is immutable once built and safe for
// concurrent use.
//
// Tools maps tool-name globs ("*", "skill_graph_*", "run_command") to a
// mode; where several match, deny beats ask beats allow; "*" is the mode
// of the tools no other glob matches, and without it they are denied. Paths are doublestar globs on the resolved path
// relative to the root: a path must match an Allow pattern and no Deny
// pattern; a write must also match no ReadOnly pattern. The data dir
// (".jido" unless set with WithDataDir) and ".git" are always read-only, so
// a tool can never plant a skill, a command or a git hook.
type Policy struct {
	Tools    map[string]Mode `yaml:"tools"`
	Paths    PathRules       `yaml:"paths"`
	Commands CommandRules    `yaml:"commands"`

	dataDir string
	// inherit is what the node lets commands inherit (WithInherit).
	inherit *Inherit
	// approved is the tool a person approved for one call (Approving).
	approved string
}

// Approving returns a copy of p under which tool, whose mode is ask, runs
// without asking: a person approved this call. It changes nothing for a
// denied tool or a denied path.
func (p *Policy) Approving(tool string) *Policy {
	c := *p
	c.approved = tool
	return &c
}

// PathRules are the path globs of a Policy.
type PathRules struct {
	Allow    []string `yaml:"allow"`
	Deny     []string `yaml:"deny"`
	ReadOnly []string `yaml:"read_only"`
	// ReadHardLinks lets the file tools read a file that has other hard
	// links (names that may lie outside the project). They never write
	// one.
	ReadHardLinks bool `yaml:"read_hard_links"`
}

// DefaultDataDir is the project data dir Policy protects unless told
// otherwise.
const DefaultDataDir = ".jido"

// Default is the policy of a project opened without one: every tool
// allowed, every path inside the root readable and writable except .env
// files (denied), the data dir and .git (read-only), and no program
// runnable by run_command until commands.programs names it.
func Default() *Policy {
	return &Policy{
		Tools: map[string]Mode{CatchAll: ModeAllow},
		Paths: PathRules{
			Allow: []string{"**"},
			Deny:  []string{"**/.env", "**/.env.*"},
		},
		Commands: defaultCommands(),
	}
}

// WithDataDir returns a copy of p protecting name (a directory directly
// under the root) instead of .jido.
func (p *Policy) WithDataDir(name string) *Policy {
	c := *p
	c.dataDir = name
	return &c
}

func (p *Policy) protected() []string {
	d := p.dataDir
	if d == "" {
		d = DefaultDataDir
	}
	return []string{d, ".git"}
}

// validate checks every glob and mode, naming the bad one.
func (p *Policy) validate() error {
	for glob, m := range p.Tools {
		if !doublestar.ValidatePattern(glob) {
			return bus.Errorf(bus.ReasonInvalidRequest, "tools: %q is not a valid glob", glob)
		}
		if m != ModeAllow && m != ModeDeny && m != ModeAsk {
			return bus.Errorf(bus.ReasonInvalidRequest, "tools: %q has mode %q; use allow, deny or ask", glob, m)
		}
	}
	for name, list := range map[string][]string{"paths.allow": p.Paths.Allow, "paths.deny": p.Paths.Deny, "paths.read_only": p.Paths.ReadOnly} {
		for _, g := range list {
			if !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "/") {
				return bus.Errorf(bus.ReasonInvalidRequest, "%s: %q is not a valid glob (relative to the root, '/'-separated, e.g. \"src/**/*.go\")", name, g)
			}
		}
	}
	return p.Commands.validate()
}

// ToolMode is the mode of tool: the strongest mode (deny, then ask, then
// allow) of the globs other than "*" that match it, so a deny is never
// undone by a narrower allow; "*"'s mode when no other glob matches (the
// mode of the tools a policy does not name); deny when "*" is absent too.
func (p *Policy) ToolMode(tool string) Mode {
	mode, matched := ModeDeny, false
	for glob, m := range p.Tools {
		if glob == CatchAll {
			continue
		}
		if ok, _ := doublestar.Match(glob, tool); !ok {
			continue
		}
		switch {
		case m == ModeDeny:
			return ModeDeny
		case m == ModeAsk || !matched:
			mode = m
		}
		matched = true
	}
	if m, ok := p.Tools[CatchAll]; ok && !matched {
		return m
	}
	return mode
}

// Authorize says whether tool may do op on path, a path already resolved by
// a Root (relative, clean, '/'-separated; "" when the call names no path).
// The refusals, in the order they are checked: the tool denied, the path
// denied, the tool asking for approval (approval_required) — asking is
// pointless for a call that would be refused anyway.
func (p *Policy) Authorize(tool string, op Op, path string) error {
	mode := p.ToolMode(tool)
	if mode == ModeDeny {
		return denied("tool %s is denied by the project's policy (tools: in its policy)", tool)
	}
	if path != "" {
		if err := p.authorizePath(op, path); err != nil {
			return fmt.Errorf("tool %s: %w", tool, err)
		}
	}
	if mode == ModeAsk && tool != p.approved {
		return bus.Errorf(ReasonApprovalRequired, "tool %s needs a person's approval to %s %s", tool, op, orRoot(path))
	}
	return nil
}

func (p *Policy) authorizePath(op Op, path string) error {
	if path == ".." || strings.HasPrefix(path, "../") || strings.HasPrefix(path, "/") {
		return outsideRoot(path, "is not a path resolved inside the root")
	}
	if g, ok := firstMatch(p.Paths.Deny, path); ok {
		return denied("%s matches the deny pattern %q of the project's policy", path, g)
	}
	if op == OpWrite {
		first, _, _ := strings.Cut(path, "/")
		for _, d := range p.protected() {
			// EqualFold: on a case-insensitive file system .JIDO is .jido.
			if strings.EqualFold(first, d) {
				return denied("%s is inside %s, which tools may read but never change", path, d)
			}
		}
		if g, ok := firstMatch(p.Paths.ReadOnly, path); ok {
			return denied("%s matches the read_only pattern %q of the project's policy", path, g)
		}
	}
	if _, ok := firstMatch(p.Paths.Allow, path); !ok {
		return denied("%s matches no allow pattern of the project's policy (paths.allow)", path)
	}
	return nil
}

func firstMatch(globs []string, path string) (string, bool) {
	i := slices.IndexFunc(globs, func(g string) bool {
		ok, _ := doublestar.Match(g, path)
		return ok
	})
	if i < 0 {
		return "", false
	}
	return globs[i], true
}

func orRoot(path string) string {
	if path == "" || path == "." {
		return "the project root"
	}
	return path
}

// Visible reports whether tool may be offered at all: its mode is not deny.
func (p *Policy) Visible(tool string) bool { return p.ToolMode(tool) != ModeDeny }
