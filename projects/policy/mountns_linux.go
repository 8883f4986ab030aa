//go:build linux

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Landlock grants write access to the whole root and cannot take it away
// from part of it, so .jido and .git are kept read-only another way: the
// helper starts in a user and mount namespace of its own (unprivileged, so
// it reaches nothing the node could not), bind-mounts each protected entry
// read-only over itself there, and drops every capability before it execs
// the command. The command then meets EROFS writing them, EBUSY renaming
// or removing them (they are mount points), EXDEV hard-linking out of them,
// and EPERM on mount, umount and remount: it holds no capability, and
// Landlock forbids changing the mount topology anyway. A namespace it
// creates itself cannot help either: mounts inherited from a more
// privileged namespace are locked read-only there.

// plainAttr starts the helper in a process group of its own, killed with
// the node: a command the node no longer watches (it was killed, kill -9
// included) must not go on changing the project after the log recorded it
// interrupted.
func plainAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// namespaceAttr starts the helper in a new user and mount namespace, as
// the node's own uid and gid (mapped to themselves, so files keep their
// owners), with CAP_SYS_ADMIN (to mount) and CAP_SETPCAP (to drop the
// bounding set) kept across its exec as ambient capabilities: a non-root
// uid loses the namespace's full set on exec otherwise.
func namespaceAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// namespacesWork is whether namespaceAttr can start a process here, tried
// once per node with /bin/true. Ubuntu's AppArmor lets an unprivileged
// process create the namespace but not use its capabilities, so that
// setting counts as no.
var namespacesWork = sync.OnceValue(func() bool {
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil &&
		strings.TrimSpace(string(b)) == "1" && os.Geteuid() != 0 {
		return false
	}
	for _, p := range []string{"/usr/bin/true", "/bin/true"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		cmd := exec.Command(p)
		cmd.SysProcAttr = namespaceAttr()
		return cmd.Run() == nil
	}
	return false
})

// protectEntries runs in the helper, in its new mount namespace, before it
// enters the working directory (a working directory entered first would
// keep the writable mount): it makes mounts private to the namespace, then
// bind-mounts each of spec.Protect that exists read-only over itself. An
// entry that is a link is protected at its target when that is inside the
// root (outside, Landlock keeps it read-only already); an entry that does
// not exist cannot be mounted over, and Exec reports it when the command
// creates it.
func protectEntries(spec *CommandSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the command's mounts private: %w", err)
	}
	for _, name := range spec.Protect {
		p := filepath.Join(spec.Root, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("protect %s: %w", name, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || !isUnder(spec.Root, real) {
				continue // dangling, or outside the root and read-only there
			}
			p = real
		}
		if err := readOnlyBind(p); err != nil {
			return fmt.Errorf("protect %s: %w", name, err)
		}
	}
	return nil
}

// remountKeep are the mount flags a read-only remount must repeat: in a
// user namespace the kernel refuses to clear flags locked by the parent
// namespace (nosuid, nodev, noexec, atime). statfs reports them with the
// same bit values as the MS_ flags.
const remountKeep = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME

func readOnlyBind(p string) error {
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s: %w", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("statfs %s: %w", p, err)
	}
	flags := uintptr(unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY) | uintptr(st.Flags)&remountKeep
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s read-only: %w", p, err)
	}
	if err := unix.Statfs(p, &st); err != nil || st.Flags&unix.MS_RDONLY == 0 {
		return fmt.Errorf("%s is not read-only after the remount (%v)", p, err)
	}
	return nil
}

// secureBits make the namespace's root gain nothing on exec and lock that,
// with ambient capabilities, so nothing undoes it.
const secureBits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// dropCapabilities leaves the calling thread (the one that execs the
// command: the helper locks it) with no capability, an empty bounding set
// and no_new_privs, so the command starts with none and can gain none,
// not even from a file's capabilities or a set-uid program.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secureBits, 0, 0, 0); err != nil {
		return fmt.Errorf("set securebits: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) && c > 0 {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return nil
}

// dieWithParent has the calling thread's process (and the program it
// execs) killed when the process that started it, parent, ends; an exec
// that gains no privilege keeps the setting. It fails if parent has ended
// already.
func dieWithParent(parent int) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set the parent-death signal: %w", err)
	}
	if os.Getppid() != parent {
		return fmt.Errorf("the node that started the command has ended")
	}
	return nil
}
