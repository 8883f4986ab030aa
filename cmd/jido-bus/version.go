package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/eventlog"
)

// commit is set at build time with -ldflags "-X main.commit=…"; without it
// the commit comes from the build's version-control stamp, when there is
// one.
var commit = ""

// versionInfo is what `jido-bus version -o json` prints.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified,omitempty"`
	Go        string `json:"go"`
	LogFormat int    `json:"log_format"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: version, Commit: commit, Go: runtime.Version(), LogFormat: eventlog.FormatVersion}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Commit == "" {
					v.Commit = s.Value
				}
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and log format of this build",
		Long: `Print this build's version, the commit it was built from (with
"(modified)" when the work tree had changes), the Go version and the
version of the event log's on-disk format, which a node refuses to open in
another format.

-o json (or --json) prints {"version","commit","modified"?,"go","log_format"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if asJSON {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			modified := ""
			if v.Modified {
				modified = " (modified)"
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "jido-bus %s\ncommit:     %s%s\ngo:         %s\nlog format: %d\n", v.Version, v.Commit, modified, v.Go, v.LogFormat)
			return err
		},
	}
	addOutputFlags(cmd, &asJSON)
	return cmd
}
