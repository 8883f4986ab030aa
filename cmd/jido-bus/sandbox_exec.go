package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// newSandboxExecCmd is the hidden helper run_command re-executes jido-bus
// as: it confines itself with Landlock and execve's the command (see
// policy.HelperMain). It is not for people, so it is not in --help.
func newSandboxExecCmd() *cobra.Command {
	return &cobra.Command{
		Use:                policy.HelperArg,
		Hidden:             true,
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(*cobra.Command, []string) error {
			os.Exit(policy.HelperMain())
			return nil
		},
	}
}
