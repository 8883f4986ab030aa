package policy

import "slices"

// What a command may read. Reads are an allow-list, not a deny-list: a
// command sees its project root (read and write), a private temp dir
// (/tmp, read and write), the system paths below, the paths the node's
// operator adds (Host.Read) and the program it runs; nothing else of the
// machine exists for it. The paths of Host.Hide (the node's data dir, its
// configuration, the other projects) are covered with something empty
// wherever the allow-list would show them.

// systemReads are the paths every command may read: what programs need to
// start, find their libraries, resolve names, check certificates and
// tell the time. Entries that do not exist on a machine are skipped.
// Secrets that live beside these (/etc/ssl/private, /etc/shadow, keys in
// /etc/pki/tls/private) are not listed, so they are not there.
var systemReads = []string{
	// Programs and their libraries (on merged-/usr systems /bin, /sbin
	// and /lib* are links into /usr and appear as such).
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	// The dynamic loader's configuration, and Debian's alternatives (the
	// links /usr/bin/awk, /usr/bin/cc go through).
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload", "/etc/alternatives",
	// Users and groups (ls -l, git, ssh look themselves up), names and
	// services (a command with network: true resolves hosts).
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf",
	"/etc/gai.conf", "/etc/services", "/etc/protocols",
	// Certificates (Debian, Red Hat), never the private keys beside them.
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/pki/tls/certs", "/etc/pki/ca-trust",
	"/etc/pki/tls/openssl.cnf",
	// Time zone, locale aliases, the system's name.
	"/etc/localtime", "/etc/locale.alias", "/etc/os-release",
}

// SystemReads returns the system paths every command may read (those that
// exist on the machine): what a program needs to run. It is a new slice
// each time; the node's operator adds more with Host.Read.
func SystemReads() []string { return slices.Clone(systemReads) }

// devices are the device files a command gets, by whether it may write
// them; /dev/fd, /dev/stdin, /dev/stdout and /dev/stderr are links into
// its own /proc, and /dev/shm is its /tmp.
var devices = []struct {
	name  string
	write bool
}{
	{"/dev/null", true}, {"/dev/full", true}, {"/dev/zero", false}, {"/dev/random", false}, {"/dev/urandom", false},
}

// commandTemp is where a command confined in its own namespaces finds its
// temp dir (TMPDIR): a size-limited tmpfs of its own.
const commandTemp = "/tmp"
