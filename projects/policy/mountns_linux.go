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
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// A command runs in user, mount, PID and IPC namespaces of its own (and a
// network namespace unless its policy allows the network). The helper
// starts in them as their root (unprivileged: it reaches nothing the node
// could not), builds the command's view of the file system
// (view_linux.go), bind-mounts each protected entry read-only over itself,
// bounds the PID namespace's pid_max, and drops every capability before it
// starts the command as its only child. Landlock grants write access to
// the whole root and cannot take it away from part of it; the read-only
// mounts do: the command meets EROFS writing .jido or .git, EBUSY renaming
// or removing them (they are mount points), EXDEV hard-linking out of
// them, and EPERM on mount, umount and remount: it holds no capability,
// and Landlock forbids changing the mount topology anyway. A namespace it
// creates itself cannot help either: mounts inherited from a more
// privileged namespace are locked read-only there.
//
// The helper is PID 1 of the command's PID namespace: when it ends — the
// command ended, Exec killed it at a deadline, or the node died (the
// parent-death signal) — the kernel kills every process left in the
// namespace, those that left the session with setsid included, before the
// helper's exit is reported. Nothing a command starts outlives its call.

// plainAttr starts the helper in a process group of its own, killed with
// the node: a command the node no longer watches (it was killed, kill -9
// included) must not go on changing the project after the log recorded it
// interrupted. It is for commands the operator and the policy let run
// without namespaces.
func plainAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// programAttr starts the program from the helper: it dies with the
// helper's thread that started it.
func programAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }

// namespaceAttr starts the helper in its new namespaces, as the node's own
// uid and gid (mapped to themselves, so files keep their owners), with
// CAP_SYS_ADMIN (to mount and to set pid_max) and CAP_SETPCAP (to drop the
// bounding set) kept across its exec as ambient capabilities: a non-root
// uid loses the namespace's full set on exec otherwise.
func namespaceAttr(network bool) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
		Cloneflags:  flags,
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
		cmd.SysProcAttr = namespaceAttr(false)
		return cmd.Run() == nil
	}
	return false
})

// protectEntries runs in the helper, in the command's view, before it
// enters the working directory (a working directory entered first would
// keep the writable mount): it bind-mounts each of spec.Protect that
// exists read-only over itself. An entry that is a link is protected at
// its target when that is inside the root (outside, the view has it
// read-only already); an entry that does not exist cannot be mounted
// over, and Exec reports it when the command creates it.
func protectEntries(spec *CommandSpec) error {
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

// dropCapabilities leaves every thread of the helper (which stays as the
// command's init, so a thread keeping a capability would be something for
// the command to get at) with no capability, an empty bounding set and
// no_new_privs, so the command starts with none and can gain none, not
// even from a file's capabilities or a set-uid program. The helper is
// made non-dumpable too: the command, holding no CAP_SYS_PTRACE, can then
// neither trace it nor open its memory.
func dropCapabilities() error {
	all := func(what string, nr, a1, a2, a3 uintptr) error {
		if _, _, e := psx.Syscall6(nr, a1, a2, a3, 0, 0, 0); e != 0 {
			return fmt.Errorf("%s: %w", what, e)
		}
		return nil
	}
	if err := all("set securebits", unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, secureBits, 0); err != nil {
		return err
	}
	if err := all("clear ambient capabilities", unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil {
		return err
	}
	for c := 0; ; c++ {
		err := all(fmt.Sprintf("drop capability %d from the bounding set", c), unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0)
		if errors.Is(err, unix.EINVAL) && c > 0 {
			break // past the kernel's last capability
		}
		if err != nil {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := all("clear capabilities", unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); err != nil {
		return err
	}
	if err := all("set no_new_privs", unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the helper non-dumpable: %w", err)
	}
	return nil
}

// dieWithParent has the helper (and with it everything in its PID
// namespace) killed when the node's thread that started it ends. The
// setting is per thread and the kernel looks at the thread the node
// started, so it is made on every thread. It fails if the node has ended
// already, which status (the write end of the pipe only the node reads)
// tells: getppid says nothing from inside a PID namespace.
func dieWithParent(status int) error {
	if _, _, e := psx.Syscall3(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); e != 0 {
		return fmt.Errorf("set the parent-death signal: %w", e)
	}
	fds := []unix.PollFd{{Fd: int32(status)}}
	if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
		return fmt.Errorf("the node that started the command has ended")
	}
	return nil
}
