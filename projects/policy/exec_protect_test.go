//go:build linux

package policy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// needNamespaces skips where run_command cannot keep .jido and .git
// read-only: the kernel (or a seccomp filter, or AppArmor) refuses the
// unprivileged user namespace the helper needs.
func needNamespaces(t *testing.T) {
	t.Helper()
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	if c := Protection(); !c.Namespaces {
		t.Skipf("this system does not let an unprivileged process create a user and mount namespace (%s); the test needs them", c)
	}
}

// protectedFixture is newFixture with a .jido and a .git holding files.
func protectedFixture(t *testing.T) fixture {
	t.Helper()
	f := newFixture(t)
	for name, content := range map[string]string{
		".jido/commands/hello.md": "hello", ".git/config": "[core]\n", ".git/hooks/README": "hooks",
	} {
		p := filepath.Join(f.proj, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return f
}

// runSh runs `sh -c script` in dir (relative to the root) of proj.
func runSh(t *testing.T, proj, dir, script string) *CommandResult {
	t.Helper()
	sb := openSandbox(t, proj, shPolicy)
	spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh", "-c", script}, Dir: dir}, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	res, err := Exec(context.Background(), spec, ExecOptions{})
	if err != nil {
		t.Fatalf("Exec %q: %v", script, err)
	}
	return res
}

// unchanged fails unless .jido and .git hold exactly what protectedFixture
// put there.
func unchanged(t *testing.T, f fixture, after string) {
	t.Helper()
	var got []string
	for _, top := range []string{".jido", ".git"} {
		filepath.WalkDir(filepath.Join(f.proj, top), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(f.proj, p)
				b, _ := os.ReadFile(p)
				fi, _ := d.Info()
				got = append(got, rel+"="+string(b)+"@"+fi.Mode().String())
			}
			return nil
		})
	}
	want := ".jido/commands/hello.md=hello@-rw-r--r-- .git/config=[core]\n@-rw-r--r-- .git/hooks/README=hooks@-rw-r--r--"
	if strings.Join(got, " ") != want {
		t.Errorf("after %s, .jido and .git hold %q; want %q", after, strings.Join(got, " "), want)
	}
}

func TestExecCannotWriteJidoOrGit(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := protectedFixture(t)
	res := runSh(t, f.proj, "", `echo x > .jido/x; a=$?; echo y > .git/y; b=$?; echo z > elsewhere; echo "$a $b $?"`)
	if st := strings.Fields(string(res.Stdout)); len(st) != 3 || st[0] == "0" || st[1] == "0" || st[2] != "0" {
		t.Errorf("exit statuses of the writes to .jido, .git and elsewhere: %q, want failure, failure, 0 (stderr %s)", st, res.Stderr)
	}
	if !strings.Contains(string(res.Stderr), "Read-only file system") {
		t.Errorf("stderr %q does not show EROFS", res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(f.proj, "elsewhere")); err != nil || string(b) != "z\n" {
		t.Errorf("the write elsewhere in the root: %q %v", b, err)
	}
	if res.Warning != "" {
		t.Errorf("warning %q with namespaces available", res.Warning)
	}
	unchanged(t, f, "plain writes")
}

// Each script is something an attacker would try to get at .jido or .git;
// each must leave both as they were.
func TestExecProtectedDirsResistAttacks(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := protectedFixture(t)
	outside := t.TempDir()
	// The error each mechanism gives, so a case passing for another
	// reason (a typo in the script) shows.
	says := map[string]string{
		"append to config":      "Read-only file system",
		"rmdir the mount point": "Device or resource busy",
		"rename .git":           "Device or resource busy",
		"rename .jido":          "Device or resource busy",
		"hard link":             "Invalid cross-device link",
		"remount rw":            "permission denied|must be superuser", // mount(8) words EPERM by the uid
		"bind over it":          "permission denied|must be superuser",
		"umount":                "must be superuser",
		"unshare -m":            "Operation not permitted",
	}
	for name, script := range map[string]string{
		"append to config":      `echo evil >> .git/config`,
		"plant a hook":          `echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
		"plant a command":       `echo evil > .jido/commands/evil.md`,
		"chmod":                 `chmod 777 .git/config .jido/commands/hello.md`,
		"rm -rf":                `rm -rf .git .jido`,
		"rmdir the mount point": `rm -rf .git/hooks .git/config; rmdir .git`,
		"symlink into .git":     `ln -s .git g && echo evil > g/hooks/pre-commit`,
		"symlink to a file":     `ln -s .git/config c && echo evil >> c`,
		"hard link":             `ln .git/config hard && echo evil >> hard`,
		"rename .git":           `mv .git x && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit`,
		"rename .jido":          `mv .jido y && mkdir -p .jido/commands && echo evil > .jido/commands/evil.md`,
		"move .jido out":        `mv .jido ` + outside + `/jido`,
		"swap through a dir":    `mkdir d && mv .git d/ ; mv d/.git .git2`,
		"remount rw":            `mount -o remount,rw .git; mount -o remount,rw,bind .git; echo evil > .git/hooks/pre-commit`,
		"umount":                `umount .git; umount -l .jido; echo evil > .git/hooks/pre-commit; echo evil > .jido/commands/evil.md`,
		"nested namespace": `unshare -Urm sh -c 'mount -o remount,rw,bind .git; umount -l .git; echo evil > .git/hooks/pre-commit;` +
			` mount -t tmpfs none .jido; echo evil > .jido/commands/evil.md'`,
		"bind over it": `mkdir -p fake/hooks && echo evil > fake/hooks/pre-commit && mount --bind fake .git`,
		"truncate":     `: > .git/config; truncate -s 0 .jido/commands/hello.md`,
		"unshare -m":   `unshare -m sh -c 'mount -o remount,rw,bind .git; echo evil > .git/hooks/pre-commit'`,
	} {
		res := runSh(t, f.proj, "", script)
		unchanged(t, f, name)
		if want := says[name]; !slices.ContainsFunc(strings.Split(want, "|"), func(w string) bool { return strings.Contains(string(res.Stderr), w) }) {
			t.Errorf("%s: stderr %q does not say %q", name, res.Stderr, want)
		}
		if t.Failed() {
			t.Fatalf("%s: stdout %q stderr %q", name, res.Stdout, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(outside, "jido")); err == nil {
			t.Fatalf("%s moved .jido outside the root", name)
		}
	}
}

// A command started inside .git (a working directory the policy allows to
// read) cannot write through its working directory either: the mount is in
// place before the helper enters it.
func TestExecInsideGitCannotWrite(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := protectedFixture(t)
	runSh(t, f.proj, ".git/hooks", `echo evil > pre-commit; echo evil > ../config; cd .. && echo evil > hooks/x`)
	unchanged(t, f, "writes from inside .git")
}

// The command holds no capability at all, in its namespace or elsewhere,
// and cannot gain one.
func TestExecCommandHasNoCapabilities(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := protectedFixture(t)
	res := runSh(t, f.proj, "", `grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status`)
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		want := "0000000000000000"
		if k == "NoNewPrivs" {
			want = "1"
		}
		if v != want {
			t.Errorf("%s is %s, want %s", k, v, want)
		}
	}
	if n := strings.Count(string(res.Stdout), "\n"); n != 6 {
		t.Errorf("read %d status lines: %q %s", n, res.Stdout, res.Stderr)
	}
}

// Choice: a protected folder that does not exist when the command starts
// cannot be mounted over, so the command may create it; Exec then says so
// in the result's Warning, naming it, so the caller can look at it before
// git (or jido-bus) trusts it.
func TestExecCreatingAMissingProtectedDirWarns(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.proj, ".jido"), 0o755))
	res := runSh(t, f.proj, "", `mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit`)
	if res.ExitCode != 0 {
		t.Fatalf("creating .git failed: %s", res.Stderr)
	}
	if !strings.Contains(res.Warning, ".git") || !strings.Contains(res.Warning, "did not exist") {
		t.Errorf("warning %q does not say the command created .git", res.Warning)
	}
	// The next command finds it and cannot change it.
	res = runSh(t, f.proj, "", `echo more > .git/hooks/pre-commit`)
	if b, _ := os.ReadFile(filepath.Join(f.proj, ".git/hooks/pre-commit")); string(b) != "evil\n" || res.ExitCode == 0 {
		t.Errorf("the second command changed the .git it found: %q (exit %d)", b, res.ExitCode)
	}
	if res.Warning != "" {
		t.Errorf("warning %q on a command that created nothing", res.Warning)
	}
}

// In a git worktree .git is a file ("gitdir: …"); it is protected the same
// way, a file bind-mounted read-only over itself.
func TestExecCannotChangeAGitFile(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	must(t, os.WriteFile(filepath.Join(f.proj, ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
	res := runSh(t, f.proj, "", `echo "gitdir: /evil" > .git; rm -f .git; mv .git g`)
	if b, _ := os.ReadFile(filepath.Join(f.proj, ".git")); string(b) != "gitdir: /elsewhere\n" {
		t.Errorf(".git is now %q (stderr %s)", b, res.Stderr)
	}
}
