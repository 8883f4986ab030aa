package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// serveCheckpointsFile is the checkpoints: section of serve's --config:
// how much the node keeps of files' contents before conversations'
// tools change them (conv rewind).
type serveCheckpointsFile struct {
	MaxSize string `yaml:"max_size"`
}

func addServeCheckpointFlags(cmd *cobra.Command, cfg *serveConfig) {
	cmd.Flags().StringVar(&cfg.checkpointMax, "checkpoint-max-size", "", "the most the node keeps, in its data dir, of files' contents before conversations' tools changed them, for conv rewind (e.g. 512MiB; default 256MiB); past it the conversations that kept first are forgotten first (checkpoints.max_size in --config)")
}

// resolveServeCheckpoints completes cfg's checkpoint cap from the file's
// section f; the flag wins.
func resolveServeCheckpoints(cfg *serveConfig, f serveCheckpointsFile, changed func(string) bool) error {
	s, what := cfg.checkpointMax, "--checkpoint-max-size"
	if !changed("checkpoint-max-size") && f.MaxSize != "" {
		s, what = f.MaxSize, "--config "+cfg.configPath+": checkpoints.max_size"
	}
	if s == "" {
		return nil
	}
	n, err := policy.ParseSize(s)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s %q: give a size such as 256MiB", what, s)
	}
	cfg.checkpointBytes = int64(n)
	return nil
}
