package policy

import "io/fs"

// Sandbox is a project's Root and Policy together: the file operations a
// tool may use, each authorized on the resolved path inside the operation,
// so the file acted on is the one the rules were checked on.
type Sandbox struct {
	Root   *Root
	Policy *Policy
	// Host is what the node's operator decides for the project's
	// commands; nil is the zero Host (the strictest).
	Host *Host
}

func (s *Sandbox) may(tool string, op Op) check {
	return func(rel string) error { return s.Policy.Authorize(tool, op, rel) }
}

// ReadFile reads path for tool (see Root.ReadFile).
func (s *Sandbox) ReadFile(tool, path string, max int64) ([]byte, error) {
	return s.Root.readFile(path, max, s.may(tool, OpRead), s.Policy.Paths.ReadHardLinks)
}

// WriteFile writes path for tool (see Root.WriteFile); each directory it
// creates on the way is authorized as a write first.
func (s *Sandbox) WriteFile(tool, path string, data []byte, perm fs.FileMode) error {
	return s.Root.writeFile(path, data, perm, s.may(tool, OpWrite))
}

// MkdirAll creates the directory path for tool.
func (s *Sandbox) MkdirAll(tool, path string) error {
	return s.Root.mkdirAll(path, s.may(tool, OpWrite))
}

// Remove removes path for tool (see Root.Remove).
func (s *Sandbox) Remove(tool, path string) error {
	return s.Root.remove(path, s.may(tool, OpWrite))
}

// Stat describes path for tool, following links inside the root.
func (s *Sandbox) Stat(tool, path string) (fs.FileInfo, error) {
	return s.Root.stat(path, true, s.may(tool, OpRead))
}

// Lstat describes path for tool, a final symlink itself.
func (s *Sandbox) Lstat(tool, path string) (fs.FileInfo, error) {
	return s.Root.stat(path, false, s.may(tool, OpRead))
}

// ReadDir lists path for tool; entries the policy denies reading are left
// out, so a listing does not show what a read would refuse.
func (s *Sandbox) ReadDir(tool, path string) ([]fs.DirEntry, error) {
	return s.Root.readDir(path, s.may(tool, OpRead), s.hidden(OpRead))
}

// WalkDir walks path for tool (see Root.WalkDir), skipping entries (and
// whole directories) the policy denies reading.
func (s *Sandbox) WalkDir(tool, path string, fn fs.WalkDirFunc) error {
	return s.Root.walkDir(path, fn, s.may(tool, OpRead), s.hidden(OpRead))
}

// hidden checks entries on the path rules alone: the tool itself was
// checked once, on the directory.
func (s *Sandbox) hidden(op Op) check {
	return func(rel string) error { return s.Policy.authorizePath(op, rel) }
}
