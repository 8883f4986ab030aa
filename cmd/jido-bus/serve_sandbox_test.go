package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// The operator's sandbox: section and flags: what commands read, the
// caps, weaker confinement; the config file and the TLS files are hidden
// from every command.
func TestServeSandboxConfig(t *testing.T) {
	path := writeConfig(t, `
tls: {cert: /etc/jido/cert.pem, key: /etc/jido/key.pem}
sandbox:
  read: [/opt/go]
  projects:
    - root: /srv/web
      read: [/srv/shared]
  limits: {processes: 4096, file_size: 4GiB, disk: 32GiB, temp_size: 2GiB, cpu_seconds: 7200, output: 64MiB}
  allow_weaker: true
`)
	cfg, err := serveFlags(t, nil, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.sandbox
	real, _ := filepath.EvalSymlinks(path)
	want := policy.Limits{Processes: 4096, FileSize: 4 << 30, Disk: 32 << 30, TempSize: 2 << 30, CPUSeconds: 7200, Output: 64 << 20}
	if !slices.Equal(s.Read, []string{"/opt/go"}) || !slices.Equal(s.ProjectRead["/srv/web"], []string{"/srv/shared"}) ||
		s.MaxLimits != want || !s.AllowWeaker {
		t.Errorf("sandbox from the file: %+v", s)
	}
	for _, hidden := range []string{real, "/etc/jido/cert.pem", "/etc/jido/key.pem"} {
		if !slices.Contains(s.Hide, hidden) {
			t.Errorf("%s is not hidden from commands: %v", hidden, s.Hide)
		}
	}
	// Flags win over the file.
	cfg, err = serveFlags(t, nil, "--config", path, "--sandbox-read", "/usr/local/go", "--sandbox-read", "/opt/x")
	if err != nil || !slices.Equal(cfg.sandbox.Read, []string{"/usr/local/go", "/opt/x"}) {
		t.Errorf("--sandbox-read: %v %v", cfg.sandbox.Read, err)
	}
	cfg, err = serveFlags(t, nil, "--sandbox-allow-weaker")
	if err != nil || !cfg.sandbox.AllowWeaker || cfg.sandbox.Hide != nil {
		t.Errorf("--sandbox-allow-weaker: %+v %v", cfg.sandbox, err)
	}
	for body, want := range map[string]string{
		"sandbox:\n  projects:\n    - root: rel\n      read: [/x]\n": "sandbox.projects[0]",
		"sandbox:\n  limits: {file_size: lots}\n":                    "size",
		"sandbox:\n  reads: [/x]\n":                                  "reads",
	} {
		if _, err := serveFlags(t, nil, "--config", writeConfig(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", body, err, want)
		}
	}
}
