package policy

import (
	"strings"
	"testing"
)

// TestToolsOverlayTheDefault: a tools key in a policy file names the tools
// it changes and leaves the others at the default ("*": allow), as the
// README says; "*" is the mode of the tools no other entry names, so an
// allow-list is "*": deny plus what it allows; a deny is never undone by a
// narrower allow. Each line: the policy's tools, then tool=mode checks.
func TestToolsOverlayTheDefault(t *testing.T) {
	for _, c := range []struct {
		tools string
		want  map[string]Mode
	}{
		{`{run_command: ask}`, map[string]Mode{"run_command": ModeAsk, "read_file": ModeAllow, "write_file": ModeAllow, "command_x": ModeAllow}},
		{`{write_file: deny}`, map[string]Mode{"write_file": ModeDeny, "read_file": ModeAllow}},
		{`{"*": deny, read_file: allow, grep: allow}`, map[string]Mode{"read_file": ModeAllow, "grep": ModeAllow, "write_file": ModeDeny, "run_command": ModeDeny}},
		{`{"*": ask, read_file: allow}`, map[string]Mode{"read_file": ModeAllow, "write_file": ModeAsk}},
		{`{"*": deny, run_command: ask}`, map[string]Mode{"run_command": ModeAsk, "read_file": ModeDeny}},
		{`{"command_*": deny, command_safe: allow, "*": allow}`, map[string]Mode{"command_safe": ModeDeny, "command_x": ModeDeny, "read_file": ModeAllow}},
		{`{"write_*": ask, write_file: deny}`, map[string]Mode{"write_file": ModeDeny, "write_note": ModeAsk, "read_file": ModeAllow}},
		{`{}`, map[string]Mode{"read_file": ModeAllow}},
	} {
		p, err := Load("policy.yaml", []byte("tools: "+c.tools+"\n"))
		if err != nil {
			t.Errorf("tools: %s: %v", c.tools, err)
			continue
		}
		for tool, want := range c.want {
			if got := p.ToolMode(tool); got != want {
				t.Errorf("tools: %s: ToolMode(%s) = %s, want %s", c.tools, tool, got, want)
			}
		}
	}
}

// TestToolsAllowWithoutCatchAllRefused: an allow entry in a map without
// "*" changes nothing once maps overlay the default, and such a map was
// an allow-list when maps replaced it: loading it would silently allow
// every tool, so it is refused, saying how to write an allow-list now.
func TestToolsAllowWithoutCatchAllRefused(t *testing.T) {
	_, err := Load("policy.yaml", []byte("tools:\n  read_file: allow\n  grep: allow\n"))
	if err == nil {
		t.Fatal("an old allow-list loaded; it would now allow every tool")
	}
	for _, want := range []string{`"grep", "read_file"`, `"*": deny`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %s: %v", want, err)
		}
	}
	wantType(t, err, "invalid_request")
}

// TestLoadDocumentTakesToolsWhole: a project's stored policy document is
// read as written, so one stored before maps overlaid the default (an
// allow-list without "*") keeps denying what it did not list.
func TestLoadDocumentTakesToolsWhole(t *testing.T) {
	p, err := LoadDocument("stored", []byte(`{"tools":{"read_file":"allow"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.ToolMode("read_file") != ModeAllow || p.ToolMode("write_file") != ModeDeny {
		t.Errorf("stored allow-list: read_file %s, write_file %s; want allow, deny", p.ToolMode("read_file"), p.ToolMode("write_file"))
	}
}
