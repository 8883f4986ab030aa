package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jido-bus/jido-bus/bus"
)

// CommandRequest is what a run_command call asks for: an argv, never a
// shell line, and a working directory.
type CommandRequest struct {
	// Argv is the program and its arguments. Argv[0] is a base name looked
	// up on the scrubbed PATH, or an absolute path.
	Argv []string `json:"argv"`
	// Dir is the working directory, relative to the root or absolute
	// inside it; "" is the root. It never widens the sandbox: it is
	// resolved through the Root like any tool path.
	Dir string `json:"dir,omitempty"`
}

// CommandSpec is a command the policy allowed, ready for Exec. Every field
// is resolved: the program to an absolute path, the working directory to a
// real path inside Root, the environment to the allow-list, the limits to
// the node's caps. It is what the sandbox-exec helper receives, and all it
// trusts.
type CommandSpec struct {
	Program string   `json:"program"` // absolute path of the program to execve
	Argv    []string `json:"argv"`    // argv as asked (Argv[0] as the caller named it)
	Dir     string   `json:"dir"`     // real absolute working directory, inside Root
	DirRel  string   `json:"dir_rel"` // Dir relative to Root, "." for the root
	Env     []string `json:"env"`     // NAME=VALUE, the allow-list's variables and HOME=Root
	Root    string   `json:"root"`    // the project's real root: the only tree a command may write
	// Network lets the command bind and connect sockets; without it the
	// command gets an empty network namespace.
	Network bool `json:"network"`
	// Read are the absolute paths the command may read beyond its root,
	// its temp dir and SystemReads: the node's operator's (Host.Read).
	Read []string `json:"read,omitempty"`
	// Hide are absolute paths covered with something empty wherever the
	// command could otherwise see them (Host.Hide).
	Hide []string `json:"hide,omitempty"`
	// Limits bound the call; every field is set.
	Limits Limits `json:"limits"`
	// Protect names the entries directly under Root (the data dir and
	// .git) a command may read but not change; the helper bind-mounts each
	// that exists read-only over itself in the command's mount namespace.
	Protect []string `json:"protect,omitempty"`
	// WithoutLandlock and WithoutNamespaces say the command may run with
	// less confinement than promised where the kernel lacks the feature:
	// the node's operator allows it and the project's policy asks for it.
	WithoutLandlock   bool `json:"without_landlock,omitempty"`
	WithoutNamespaces bool `json:"without_namespaces,omitempty"`
	// Namespaces, set by Exec, says the helper runs in new user, mount,
	// PID, IPC (and without Network, network) namespaces of its own, with
	// the capabilities to build the command's view of the file system.
	Namespaces bool `json:"namespaces,omitempty"`
	// TempDir, set by Exec, is an empty private folder on the host, removed
	// when the command ends: in namespaces, where the command's file
	// system is built (its /tmp is a tmpfs of Limits.TempSize); without,
	// the command's TMPDIR.
	TempDir string `json:"temp_dir,omitempty"`
	// Stdin is the command's standard input (a hook's request); without
	// it stdin is /dev/null. It travels inside the spec, so maxSpec
	// bounds it.
	Stdin []byte `json:"stdin,omitempty"`
	// Stdio, set by Exec, says the program's stdin is the pipe the helper
	// got at helperStdinFD (ExecOptions.Stdin), for as long as it runs;
	// Stdin is then empty.
	Stdio bool `json:"stdio,omitempty"`
}

// shells are programs whose "-c" runs a command line; named in refusals so
// the caller learns to send an argv.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox"}

// Command checks a run_command call for tool and returns the command to run.
// environ is the node's environment (os.Environ()); only the variables the
// policy lists among those the node's operator allows are kept, never one
// holding a secret of the node (see Inherit), and HOME is the root. Refusals: the tool or the
// working directory denied, the directory outside the root (outside_root),
// a program the policy does not list (denied), a program not found on the
// scrubbed PATH (not_found). A program found by name in a PATH folder inside
// the project root is skipped: the project could have planted it.
func (s *Sandbox) Command(tool string, req CommandRequest, environ []string) (*CommandSpec, error) {
	if err := checkArgv(req.Argv); err != nil {
		return nil, err
	}
	env := scrubEnv(environ, s.Policy, s.Root.Path())
	program, err := s.program(req.Argv[0], env)
	if err != nil {
		return nil, err
	}
	dir := req.Dir
	if dir == "" {
		dir = "."
	}
	res, err := s.Root.resolve(dir, resolveMode{followLast: true})
	if err != nil {
		return nil, fmt.Errorf("run_command working directory: %w", err)
	}
	defer res.close()
	if !res.info.IsDir() {
		return nil, bus.Errorf(bus.ReasonInvalidRequest, "run_command working directory %s is not a directory", res.rel)
	}
	if err := s.Policy.Authorize(tool, OpRun, res.rel); err != nil {
		return nil, err
	}
	c := s.Policy.Commands
	weaker := s.Host.allowWeaker()
	return &CommandSpec{
		Program:           program,
		Argv:              slices.Clone(req.Argv),
		Dir:               filepath.Join(s.Root.Path(), filepath.FromSlash(res.rel)),
		DirRel:            res.rel,
		Env:               env,
		Root:              s.Root.Path(),
		Network:           c.Network,
		Read:              s.Host.reads(),
		Hide:              s.hiddenFromCommands(),
		Limits:            s.Limits(),
		Protect:           s.Policy.protected(),
		WithoutLandlock:   weaker && c.WithoutLandlock == "warn",
		WithoutNamespaces: weaker && c.WithoutNamespaces == "warn",
	}, nil
}

// Limits are the limits of this project's commands: its policy's, the
// defaults where it sets none, cut to the node's caps.
func (s *Sandbox) Limits() Limits {
	return s.Policy.Commands.Limits.withDefaults(DefaultLimits).Within(s.Host.maxLimits())
}

// hiddenFromCommands is Host.Hide without the project's own root (a data dir, or
// another project, that contained it was refused at open, and hiding the
// root itself would hide everything).
func (s *Sandbox) hiddenFromCommands() []string {
	var out []string
	for _, p := range s.Host.hidden() {
		p = filepath.Clean(p)
		if filepath.IsAbs(p) && p != "/" && !isUnder(p, s.Root.Path()) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func checkArgv(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return bus.Errorf(bus.ReasonInvalidRequest, "run_command needs an argv: the program and its arguments, e.g. [\"go\", \"test\", \"./...\"]")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return bus.Errorf(bus.ReasonInvalidRequest, "run_command argv[%d] holds a NUL byte", i)
		}
	}
	if strings.ContainsAny(argv[0], " \t\n") {
		return bus.Errorf(bus.ReasonInvalidRequest, "run_command argv[0] %q holds spaces: run_command takes an argv, never a shell line; give [%q, …]",
			argv[0], strings.Fields(argv[0])[0])
	}
	return nil
}

// program resolves argv[0] and checks it against commands.programs.
func (s *Sandbox) program(name string, env []string) (string, error) {
	allowed := s.Policy.Commands.Programs
	base := filepath.Base(name)
	switch {
	case strings.ContainsRune(name, '/') && !filepath.IsAbs(name):
		return "", denied("run_command program %q is a relative path; give a name found on PATH or an absolute path listed in commands.programs", name)
	case filepath.IsAbs(name):
		if s.allowsPath(name) {
			return name, nil
		}
		// An absolute path is also the name it stands for when it is
		// the very program PATH finds for an allowed name.
		if slices.Contains(allowed, base) {
			if found, err := s.lookPath(base, env); err == nil && sameProgram(found, name) {
				return name, nil
			}
		}
		return "", denied("run_command program %s is not listed in commands.programs of the project's policy", name)
	}
	if !slices.Contains(allowed, name) && !s.allowsByName(name, env) {
		if slices.Contains(shells, name) {
			return "", denied("run_command program %s is a shell and is not listed in commands.programs: run_command takes an argv, never a shell line (listing a shell allows anything it can run)", name)
		}
		return "", denied("run_command program %s is not listed in commands.programs of the project's policy", name)
	}
	return s.lookPath(name, env)
}

// allowsPath reports whether an entry with a '/' lists path, compared after
// resolving symlinks on both sides.
func (s *Sandbox) allowsPath(path string) bool {
	for _, p := range s.Policy.Commands.Programs {
		if strings.ContainsRune(p, '/') && sameProgram(p, path) {
			return true
		}
	}
	return false
}

// allowsByName reports whether name, found on PATH, is a program listed by
// absolute path.
func (s *Sandbox) allowsByName(name string, env []string) bool {
	found, err := s.lookPath(name, env)
	return err == nil && s.allowsPath(found)
}

func sameProgram(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// lookPath finds name on the scrubbed PATH. Relative PATH entries ("", ".")
// and folders inside the project root are skipped: either would run a file
// the project (or a tool writing into it) chose.
func (s *Sandbox) lookPath(name string, env []string) (string, error) {
	path, ok := envValue(env, "PATH")
	if !ok {
		return "", bus.Errorf(bus.ReasonNotFound, "run_command program %s: PATH is not passed to commands; add PATH to commands.env or list the program by absolute path", name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if real, err := filepath.EvalSymlinks(dir); err != nil || isUnder(s.Root.Path(), real) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", bus.Errorf(bus.ReasonNotFound, "run_command program %s is not found on PATH (%s; folders inside the project are skipped)", name, path)
}

func isUnder(base, p string) bool {
	return p == base || strings.HasPrefix(p, base+string(filepath.Separator))
}

// scrubEnv keeps the variables of environ p's commands may inherit (the
// last value of a name wins, as in exec) and sets HOME to root. A variable
// holding one of the node's secrets is dropped here whatever the lists
// say: the operator's list was checked at start and the policy's at open,
// but a value is only known now.
func scrubEnv(environ []string, p *Policy, root string) []string {
	allow := p.commandEnv()
	val := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && slices.Contains(allow, k) {
			val[k] = v
		}
	}
	for k, v := range val {
		if p.inherit.secret(k, v) {
			delete(val, k)
		}
	}
	env := make([]string, 0, len(val)+1)
	for _, k := range allow {
		if v, ok := val[k]; ok {
			env = append(env, k+"="+v)
			delete(val, k)
		}
	}
	return append(env, "HOME="+root)
}

func envValue(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}
