package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mcpServerEntry is one server of an MCP client's configuration, in the
// shape Claude Desktop and Cursor (mcpServers) and VS Code (servers) read.
type mcpServerEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
}

// readmeMCPConfigs returns every MCP client configuration the README's
// recipe 6 shows, fenced JSON blocks and inline `{"servers": …}` alike,
// by the text it was read from.
func readmeMCPConfigs(t *testing.T) map[string]mcpServerEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(checkoutRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "### 6. ")
	if start < 0 {
		t.Fatal("README.md has no recipe 6 (### 6. …)")
	}
	section := readme[start:]
	if end := strings.Index(section[4:], "\n## "); end >= 0 {
		section = section[:end+4]
	}
	var texts []string
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllStringSubmatch(section, -1) {
		texts = append(texts, m[1])
	}
	texts = append(texts, regexp.MustCompile("`(\\{\"servers\"[^`]*)`").FindAllString(section, -1)...)
	out := map[string]mcpServerEntry{}
	for _, text := range texts {
		text = strings.Trim(text, "`")
		var cfg struct {
			MCPServers map[string]mcpServerEntry `json:"mcpServers"`
			Servers    map[string]mcpServerEntry `json:"servers"`
		}
		if err := json.Unmarshal([]byte(text), &cfg); err != nil {
			t.Errorf("README.md recipe 6: %s is not JSON a client reads: %v", text, err)
			continue
		}
		entry, ok := cfg.MCPServers["app"]
		if !ok {
			entry, ok = cfg.Servers["app"]
		}
		if !ok {
			t.Errorf("README.md recipe 6: %s configures no server app", text)
			continue
		}
		out[text] = entry
	}
	return out
}

// TestREADMEMCPConfigs (issue 21, the manual's recipe 6): every MCP
// client configuration the README shows is JSON its client reads, and
// the official MCP TypeScript client, launching the stdio command with
// the arguments written there or reaching the URL written there, plays a
// whole session. Only the README's placeholders are replaced: the
// binary's path, the project's folder and the gateways' address.
func TestREADMEMCPConfigs(t *testing.T) {
	if checkoutRootErr != nil {
		t.Fatal(checkoutRootErr)
	}
	configs := readmeMCPConfigs(t)
	proj := mcpClientProject(t)
	var stdio, http int
	for text, c := range configs {
		switch {
		case c.Command != "":
			stdio++
			if c.Type != "" && c.Type != "stdio" {
				t.Errorf("%s: type %q with a command", text, c.Type)
			}
			if c.Command != "/path/to/bin/jido-bus" {
				t.Errorf("%s: command %q, want the README's placeholder /path/to/bin/jido-bus", text, c.Command)
			}
			args := make([]string, len(c.Args))
			for i, a := range c.Args {
				args[i] = strings.ReplaceAll(a, "/home/me/src/app", proj)
			}
			t.Run("stdio", func(t *testing.T) {
				checkMCPReport(t, runMCPClient(t, append([]string{"stdio", tools.JidoBus}, args...)...))
			})
		case c.URL != "":
			http++
			if c.Type != "" && c.Type != "http" {
				t.Errorf("%s: type %q with a URL", text, c.Type)
			}
			if !strings.HasPrefix(c.URL, "http://127.0.0.1:8080/") {
				t.Errorf("%s: URL %q is not on make run's gateways, http://127.0.0.1:8080", text, c.URL)
				continue
			}
			t.Run("http", func(t *testing.T) {
				node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--open", proj+"=app")
				checkMCPReport(t, runMCPClient(t, "http", strings.Replace(c.URL, "http://127.0.0.1:8080", httpBase(t, node), 1)))
			})
		default:
			t.Errorf("%s: neither a command nor a URL", text)
		}
	}
	if stdio < 2 || http < 2 {
		t.Errorf("README.md recipe 6 shows %d stdio and %d HTTP configurations, want the mcpServers and the VS Code form of each:\n%v", stdio, http, configs)
	}
}
