package assets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compatDir is a data dir of commands and skills written for other coding
// agents (testdata/compat/SOURCES.md says where each comes from).
const compatDir = "testdata/compat"

// TestOtherAgentsAssetsLoadUnchanged: Claude Code commands and Agent
// Skills folders, as published, load with no diagnostic: a hint YAML
// reads as a list ("[scope]") or cannot read ("[--strict] [--json]") is
// the hint as written, Claude Code's keys are accepted and kept, a skill
// without a name is named by its folder, and a skill's files beside its
// SKILL.md are listed.
func TestOtherAgentsAssetsLoadUnchanged(t *testing.T) {
	dir := copyTree(t, compatDir)
	s := load(t, dir, Options{})
	if len(s.Diagnostics) != 0 {
		t.Fatalf("diagnostics: %v", s.Diagnostics)
	}
	for name, want := range map[string]struct{ hint, desc string }{
		"models": {"[modality|service|action]", "List and compare RunAPI models by modality, service, or action."},
		"doctor": {"[--strict] [--json]", "Run one-shot environment diagnostics for Diagram Design readiness"},
		"review": {"[scope]", "Review the changes in a scope of the code"},
	} {
		c := s.Commands[name]
		if c == nil {
			t.Errorf("command %s did not load (commands: %v)", name, keys(s.Commands))
			continue
		}
		if c.ArgumentHint != want.hint || c.Description != want.desc {
			t.Errorf("command %s: hint %q, description %q; want %q, %q", name, c.ArgumentHint, c.Description, want.hint, want.desc)
		}
	}
	if c := s.Commands["doctor"]; c != nil && strings.Join(c.AllowedTools, ",") != "Read,Bash,Glob" {
		t.Errorf("doctor's allowed-tools: %q", c.AllowedTools)
	}
	if c := s.Commands["review"]; c != nil && (c.Model != "claude-3-5-haiku-20241022" || !c.DisableModelInvocation ||
		strings.Join(c.AllowedTools, ",") != "Bash(git diff:*),Bash(git log:*),Read,Grep") {
		t.Errorf("review: model %q, disable-model-invocation %v, allowed-tools %q", c.Model, c.DisableModelInvocation, c.AllowedTools)
	}

	ic := s.Skills["internal-comms"]
	if ic == nil || !strings.HasPrefix(ic.Description, "A set of resources to help me write") || ic.License != "Complete terms in LICENSE.txt" {
		t.Fatalf("skill internal-comms: %+v (skills: %v)", ic, keys(s.Skills))
	}
	files, more, err := ic.Resources()
	if err != nil || more || !slices.Equal(files, []string{"LICENSE.txt", "examples/general-comms.md"}) {
		t.Errorf("internal-comms' files: %q, more %v, %v", files, more, err)
	}
	if ic.Dir() != filepath.Join(dir, "skills", "internal-comms") {
		t.Errorf("internal-comms' folder: %s", ic.Dir())
	}

	rn := s.Skills["release-notes"]
	if rn == nil {
		t.Fatalf("skill release-notes (no name: key, named by its folder) did not load: %v", keys(s.Skills))
	}
	if rn.ArgumentHint != "[version]" || rn.Model != "sonnet" || rn.WhenToUse == "" || strings.Join(rn.AllowedTools, ",") != "Read,Bash(git log:*)" {
		t.Errorf("release-notes: %+v", rn)
	}
	if files, _, _ := rn.Resources(); !slices.Equal(files, []string{"references/format.md"}) {
		t.Errorf("release-notes' files: %q", files)
	}
}

// TestTextKeysReadAsWritten: the hint and the description are read as the
// text they show whatever YAML would make of them, other keys as YAML
// says, and a line number in an error still names the file's line.
func TestTextKeysReadAsWritten(t *testing.T) {
	for _, c := range []struct{ front, hint, desc string }{
		{"argument-hint: [scope]\n", "[scope]", ""},
		{"argument-hint: [pr-number] [priority] [assignee]\n", "[pr-number] [priority] [assignee]", ""},
		{"argument-hint: <optional: a platform>\r\ndescription: Fix: the thing\r\n", "<optional: a platform>", "Fix: the thing"},
		{"argument-hint: '[quoted]'\n", "[quoted]", ""},
		{"argument-hint: <file> [--dry-run]\n", "<file> [--dry-run]", ""},
		{"description: >-\n  Folded\n  text.\nargument-hint: {a: b}\n", "{a: b}", "Folded text."},
		{"description: [WIP] the draft\n", "", "[WIP] the draft"},
	} {
		dir := tree(t, map[string]string{"commands/c.md": "---\n" + c.front + "---\nBody $ARGUMENTS\n"})
		s := load(t, dir, Options{})
		cmd := s.Commands["c"]
		if cmd == nil {
			t.Errorf("%q: not loaded: %v", c.front, s.Diagnostics)
			continue
		}
		if cmd.ArgumentHint != c.hint || cmd.Description != c.desc {
			t.Errorf("%q: hint %q, description %q; want %q, %q", c.front, cmd.ArgumentHint, cmd.Description, c.hint, c.desc)
		}
	}
	// The quoting keeps lines: an error below a quoted hint names its line.
	dir := tree(t, map[string]string{"commands/c.md": "---\nargument-hint: [a] [b]\nallowed-tools: [Read\n---\n"})
	if ds := diagFor(load(t, dir, Options{}), "commands/c.md"); len(ds) != 1 || ds[0].Line != 3 {
		t.Errorf("diagnostics %v, want one on line 3", ds)
	}
}

// TestSkillWithoutDescriptionTakesItsFirstParagraph: as Claude Code does,
// a SKILL.md without a description is described by its body's first
// paragraph of text.
func TestSkillWithoutDescriptionTakesItsFirstParagraph(t *testing.T) {
	dir := tree(t, map[string]string{"skills/lint/SKILL.md": "---\nname: lint\n---\n# Lint\n\nRun the linters\nand fix what they say.\n\nMore.\n"})
	s := load(t, dir, Options{})
	if sk := s.Skills["lint"]; sk == nil || sk.Description != "Run the linters and fix what they say." {
		t.Fatalf("skill %+v, diagnostics %v", sk, s.Diagnostics)
	}
}

// copyTree copies the fixture folder src into a temporary folder, so a
// test never writes into the checkout.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
