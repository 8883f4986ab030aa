package policy

import (
	"os"
	"strings"
	"testing"
)

// TestSecurityDocNamesEveryRead: docs/security.md's run_command sandbox
// section names every system path and device a command may read, so the
// page an operator checks says exactly what is readable (it left out six
// files of /etc the view holds: services, protocols, gai.conf, host.conf,
// locale.alias, os-release).
func TestSecurityDocNamesEveryRead(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## The run_command sandbox")
	if start < 0 {
		t.Fatal(`docs/security.md has no section "## The run_command sandbox"`)
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	paths := SystemReads()
	for _, d := range devices {
		paths = append(paths, d.name)
	}
	for _, p := range paths {
		if !strings.Contains(section, "`"+p+"`") {
			t.Errorf("docs/security.md's run_command sandbox section does not name `%s`, which every command may read: add it to the table of what a command sees", p)
		}
	}
}
