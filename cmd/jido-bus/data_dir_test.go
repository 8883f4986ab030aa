package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestDefaultDataDirIsOutsideTheWorkingTree: told no --data-dir, a command
// keeps its data under $XDG_DATA_HOME/jido-bus/node (~/.local/share/…
// without it), never in the folder it runs in, which may then be opened
// as a project; a ./data holding a log (the old default) is still used,
// with a note naming the new place.
func TestDefaultDataDirIsOutsideTheWorkingTree(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		getenv func(string) string
		want   string
	}{
		{env("XDG_DATA_HOME", "/x/share", "HOME", "/home/u"), "/x/share/jido-bus/node"},
		{env("HOME", "/home/u"), "/home/u/.local/share/jido-bus/node"},
	} {
		dir, note, err := defaultDataDir(c.getenv)
		if err != nil || dir != c.want || note != "" {
			t.Errorf("default data dir %q, note %q, %v; want %q and no note", dir, note, err, c.want)
		}
	}
	// A ./data without a log is somebody's folder, not a node's.
	if err := os.MkdirAll("data", 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, _, _ := defaultDataDir(env("HOME", "/home/u")); dir != "/home/u/.local/share/jido-bus/node" {
		t.Errorf("a ./data without a log taken as the data dir: %q", dir)
	}
	if err := os.MkdirAll(logDir("data"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, note, err := defaultDataDir(env("HOME", "/home/u"))
	if err != nil || dir != "./data" || !strings.Contains(note, "/home/u/.local/share/jido-bus/node") || strings.Contains(note, "\n") {
		t.Errorf("with ./data holding a log: %q, note %q, %v; want ./data and a one-line note naming the new default", dir, note, err)
	}
}

// TestServeDefaultsToTheUsersDataDir: serve told no --data-dir (and no
// data_dir in --config) runs on the per-user data dir, and says where a
// ./data it found instead came from.
func TestServeDefaultsToTheUsersDataDir(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	share := t.TempDir()
	t.Chdir(t.TempDir())
	getenv := func(k string) string {
		if k == "XDG_DATA_HOME" {
			return share
		}
		return ""
	}
	cmd, flags := newServeCmdConfig()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := resolveServeConfig(cmd, flags, getenv)
	if err != nil || cfg.dataDir != filepath.Join(share, "jido-bus", "node") || len(cfg.notes) != 0 {
		t.Fatalf("serve's data dir %q (notes %q), %v; want %s", cfg.dataDir, cfg.notes, err, filepath.Join(share, "jido-bus", "node"))
	}
	conf := filepath.Join(t.TempDir(), "jido.yaml")
	if err := os.WriteFile(conf, []byte("data_dir: /srv/jido\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, flags = newServeCmdConfig()
	if err := cmd.ParseFlags([]string{"--config", conf}); err != nil {
		t.Fatal(err)
	}
	if cfg, err := resolveServeConfig(cmd, flags, getenv); err != nil || cfg.dataDir != "/srv/jido" {
		t.Fatalf("data_dir of --config: %q, %v", cfg.dataDir, err)
	}
	if err := os.MkdirAll(logDir("data"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, flags = newServeCmdConfig()
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err = resolveServeConfig(cmd, flags, getenv)
	if err != nil || cfg.dataDir != "./data" || len(cfg.notes) != 1 {
		t.Fatalf("serve with a ./data holding a log: %q (notes %q), %v; want ./data and one note", cfg.dataDir, cfg.notes, err)
	}
}

// TestDataHomeIsTheUsersOnly: the per-user data home is made readable by
// its user only (a node's log holds its conversations and what its tools
// read); one that exists is left as it is.
func TestDataHomeIsTheUsersOnly(t *testing.T) {
	share := filepath.Join(t.TempDir(), "share")
	getenv := func(k string) string {
		if k == "XDG_DATA_HOME" {
			return share
		}
		return ""
	}
	if err := makeDataHome(getenv); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(share, "jido-bus"))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the data home: %v %v, want mode 0700", st.Mode(), err)
	}
	if err := os.Chmod(filepath.Join(share, "jido-bus"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := makeDataHome(getenv); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(share, "jido-bus")); st.Mode().Perm() != 0o750 {
		t.Errorf("an existing data home was changed: %v", st.Mode())
	}
}
