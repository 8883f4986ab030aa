package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/node"
)

// Where a node keeps its data when nobody says: per user, outside every
// working tree. A data dir inside the folder a user works in (the old
// ./data) made that folder impossible to open as a project — the node
// refuses a project whose tools could change its own log — and sent the
// log into whatever the user copied, archived or committed.
//
// The layout under $XDG_DATA_HOME/jido-bus (~/.local/share/jido-bus):
//
//	node/  serve's data dir, and what every other command reads by default
//	demo/  make run's copy of examples/demo, a project beside the node's dir (never inside it)
//	mcp/   jido-bus mcp's embedded node
const (
	dataHomeDir    = "jido-bus"
	nodeDataSubdir = "node"
	// legacyDataDir is the default of the releases before: a data dir
	// there holding a log is still used when nothing else is said.
	legacyDataDir = "./data"
)

// dataDirHelp is the --data-dir default as the help texts say it.
const dataDirHelp = "~/.local/share/jido-bus/node ($XDG_DATA_HOME/jido-bus/node), or ./data when it holds a log"

// jidoDataHome is $XDG_DATA_HOME/jido-bus, or ~/.local/share/jido-bus.
func jidoDataHome(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, dataHomeDir), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil || home == "" {
			return "", errors.New("no --data-dir given and no home directory to keep the data in ($HOME and $XDG_DATA_HOME are unset): give --data-dir DIR")
		}
	}
	return filepath.Join(home, ".local", "share", dataHomeDir), nil
}

// defaultDataDir is the data dir of a command told none: ./data when the
// working directory has one holding an event log (a node ran there
// before the default moved; a note says so), else the per-user one.
func defaultDataDir(getenv func(string) string) (dir, note string, err error) {
	if st, err := os.Stat(logDir(legacyDataDir)); err == nil && st.IsDir() {
		home, _ := jidoDataHome(getenv)
		return legacyDataDir, "using ./data, found here: the default data dir is now " + filepath.Join(home, nodeDataSubdir) + " (--data-dir names one; move ./data there to keep its log and leave this folder free to open as a project)", nil
	}
	home, err := jidoDataHome(getenv)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(home, nodeDataSubdir), "", nil
}

// makeDataHome creates $XDG_DATA_HOME/jido-bus, when missing, readable by
// its user only: a node's log holds its conversations and what tools
// read, and the default place is in a home other users may enter.
func makeDataHome(getenv func(string) string) error {
	home, err := jidoDataHome(getenv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(home), err)
	}
	if err := os.Mkdir(home, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w (give --data-dir a directory this user can write)", home, err)
	}
	return nil
}

// addDataDirFlag registers serve's --data-dir: the directory the node
// keeps its data in, created when missing. Empty means defaultDataDir.
func addDataDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "data-dir", "", "directory the node keeps its event log, projections and JetStream in, created if missing (default "+dataDirHelp+")")
}

// logDir is where the event log lives inside a data directory.
func logDir(dataDir string) string { return node.LogDir(dataDir) }
