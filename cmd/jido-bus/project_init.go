package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// starterFile is one file project init writes, relative to the folder.
type starterFile struct {
	name, text string
}

// starter is the .jido/ project init writes: each file commented, each
// valid as written (TestProjectInitStarterLoads opens it), so that a new
// project works first and is edited second.
var starter = []starterFile{
	{policy.DefaultDataDir + "/config.yaml", `# The assistant's model for this project (jido-bus conv chat <project>).
# A project names one of its node's providers; the key stays in the
# node's environment, never in this file:
#   openai      export OPENAI_API_KEY=... where the node runs (serve, make run)
#   anthropic   export ANTHROPIC_API_KEY=..., with e.g. model: claude-sonnet-4-5
#   others      the node's operator adds them, e.g. a local Ollama:
#               jido-bus serve --provider local=openai,base_url=http://127.0.0.1:11434/v1
#               then provider: local, model: llama3.1:8b
# This file is read at each model call: an edit applies to the next one.
llm:
  provider: openai
  model: gpt-4o-mini
  # temperature: 0.2
  # max_tokens: 4096
  # timeout_ms: 120000        # one attempt, from the request to the end of the answer
# approval_timeout_ms: 300000  # how long a tool call the policy asks about waits for a person
`},
	{policy.DefaultDataDir + "/policy.yaml", `# What the project's tools may do. Keys left out keep the defaults:
# every tool allowed, every path but .env files, .jido/ and .git/ read-only.
tools:                       # tool name (a glob) -> allow | deny | ask
  "*": allow
  write_file: ask            # a person approves each change: conv chat asks [y/N/a]
  edit_file: ask
  run_command: ask
paths:                       # globs on the resolved path, relative to this folder; deny beats allow
  deny: ["**/.env", "**/.env.*"]
commands:
  programs: []               # what run_command may start, e.g. [go, git, make]; none: it is not offered
  # network: false           # commands open no TCP connection unless true
`},
	{policy.DefaultDataDir + "/commands/review.md", `---
description: Review a file for bugs, unclear names and missing tests
argument-hint: FILE
---
Read $1 and review it: list the bugs you find first, then names that
say less than they should, then the tests it lacks. Quote the lines you
mean. Change nothing.
`},
	{policy.DefaultDataDir + "/skills/project-notes/SKILL.md", `---
name: project-notes
description: How this project is laid out, built and tested. Read it before changing code.
---
# Project notes

Write here what a newcomer (or a model) needs to know before changing
anything: where the code lives, how to build it, how to run the tests,
and the rules the project keeps.
`},
}

func newProjectInitCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Write a commented starter .jido/ into a folder (default: here)",
		Long: `Init writes a starter .jido/ into DIR (default the working directory,
created if missing), so that the folder can be opened as a project and
talked to:

  .jido/config.yaml                   the model: provider openai, gpt-4o-mini (comments say how to choose another)
  .jido/policy.yaml                   what the tools may do: writes and commands are asked about
  .jido/commands/review.md            a command (project call <id> command_review '{"arguments":["main.go"]}')
  .jido/skills/project-notes/SKILL.md a skill, to fill with what the project's model should know

A file that exists already is kept as it is, and said so. Init needs no
node: it only writes files. A node that has the folder open already
picks the new files up by itself: the assets, the config, and the
policy (unless the project was opened with --policy, which wins).`,
		Example: `  jido-bus project init
  jido-bus project init ~/src/app && jido-bus project open ~/src/app --id app && jido-bus conv chat app`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return projectInit(cmd, dir)
		},
	}
	return cmd
}

// projectInit writes the starter files into dir that are not there yet,
// through an os.Root of dir, so that a .jido that is a link out of the
// folder is refused rather than written through.
func projectInit(cmd *cobra.Command, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("project init: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return fmt.Errorf("project init: %w", err)
	}
	defer root.Close()
	out := cmd.OutOrStdout()
	for _, f := range starter {
		if err := root.MkdirAll(path.Dir(f.name), 0o755); err != nil {
			return fmt.Errorf("project init: create %s: %w", filepath.Join(abs, path.Dir(f.name)), err)
		}
		fh, err := root.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			fmt.Fprintf(out, "kept  %s (it exists)\n", filepath.Join(abs, f.name))
			continue
		}
		if err != nil {
			return fmt.Errorf("project init: %w", err)
		}
		_, werr := fh.WriteString(f.text)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("project init: write %s: %w", filepath.Join(abs, f.name), werr)
		}
		fmt.Fprintf(out, "wrote %s\n", filepath.Join(abs, f.name))
	}
	id := suggestedID(filepath.Base(abs))
	fmt.Fprintf(out, "the model is openai's gpt-4o-mini: export OPENAI_API_KEY where the node runs, or name another provider in %s\n", filepath.Join(abs, policy.DefaultDataDir, "config.yaml"))
	fmt.Fprintf(out, "next: jido-bus project open %s --id %s && jido-bus conv chat %s\n", shellQuote(abs), id, id)
	fmt.Fprintf(out, "(open already? the node picks the new files up by itself, the policy too unless the project was opened with --policy: jido-bus project reload %s says what changed)\n", id)
	return nil
}

// notIDChars are the characters a project id may not hold.
var notIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// suggestedID is a project id made of a folder's name: its letters,
// digits, '_' and '-', the rest turned into '-'; "app" when nothing is
// left.
func suggestedID(name string) string {
	id := strings.Trim(notIDChars.ReplaceAllString(name, "-"), "-_")
	if len(id) > 64 {
		id = strings.Trim(id[:64], "-_")
	}
	if id == "" || projects.ValidateID(id) != nil {
		return "app"
	}
	return id
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
