package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// serveSandboxFile is the sandbox: section of serve --config: what the
// node's operator decides about every project's commands, which no
// project's policy (from its own .jido/policy.yaml or given at open by a
// client with the operator role) can change.
//
//	sandbox:
//	  read: [/opt/go]                   # every project's commands may read these
//	  projects:
//	    - root: /srv/web                # and this project's commands these too
//	      read: [/srv/shared]
//	  limits:                           # the most a project's policy may ask for
//	    processes: 4096
//	    file_size: 4GiB
//	    disk: 32GiB
//	    temp_size: 2GiB
//	    cpu_seconds: 7200
//	    output: 64MiB
//	  allow_weaker: false               # let projects that ask run commands less confined than promised
type serveSandboxFile struct {
	Read     []string `yaml:"read"`
	Projects []struct {
		Root string   `yaml:"root"`
		Read []string `yaml:"read"`
	} `yaml:"projects"`
	Limits struct {
		Processes  int         `yaml:"processes"`
		FileSize   policy.Size `yaml:"file_size"`
		Disk       policy.Size `yaml:"disk"`
		TempSize   policy.Size `yaml:"temp_size"`
		CPUSeconds int         `yaml:"cpu_seconds"`
		Output     policy.Size `yaml:"output"`
	} `yaml:"limits"`
	AllowWeaker bool `yaml:"allow_weaker"`
}

func addServeSandboxFlags(cmd *cobra.Command, cfg *serveConfig) {
	f := cmd.Flags()
	f.StringArrayVar(&cfg.sandbox.Read, "sandbox-read", nil, "a folder or file every project's run_command may read besides its project and the system's paths (repeatable; per project: sandbox.projects in --config)")
	f.BoolVar(&cfg.sandbox.AllowWeaker, "sandbox-allow-weaker", false, "let a project whose policy asks for it (commands.without_landlock, without_namespaces: warn) run commands with less confinement than promised where this kernel lacks a feature; without it they are refused")
}

// resolveServeSandbox completes cfg.sandbox from the file's section f
// (what no flag gave) and hides the node's own files (the configuration,
// the TLS files) from every command.
func resolveServeSandbox(cfg *serveConfig, f serveSandboxFile, changed func(string) bool) error {
	if !changed("sandbox-read") && f.Read != nil {
		cfg.sandbox.Read = f.Read
	}
	if !changed("sandbox-allow-weaker") && f.AllowWeaker {
		cfg.sandbox.AllowWeaker = true
	}
	for i, p := range f.Projects {
		if p.Root == "" || !filepath.IsAbs(p.Root) {
			return fmt.Errorf("--config %s: sandbox.projects[%d]: give the project's root as an absolute path", cfg.configPath, i)
		}
		if cfg.sandbox.ProjectRead == nil {
			cfg.sandbox.ProjectRead = map[string][]string{}
		}
		root := filepath.Clean(p.Root)
		cfg.sandbox.ProjectRead[root] = append(cfg.sandbox.ProjectRead[root], p.Read...)
	}
	l := f.Limits
	cfg.sandbox.MaxLimits = policy.Limits{Processes: l.Processes, FileSize: l.FileSize, Disk: l.Disk, TempSize: l.TempSize, CPUSeconds: l.CPUSeconds, Output: l.Output}
	for _, p := range []string{cfg.configPath, cfg.tls.Cert, cfg.tls.Key, cfg.tls.CA} {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		cfg.sandbox.Hide = append(cfg.sandbox.Hide, abs)
	}
	return nil
}
