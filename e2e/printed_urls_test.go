package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestPrintedA2AURLFindsTheCard (issue 21, items 2 and 15): the A2A URL
// serve prints for a project is one a client can be given as it is. The
// A2A SDKs resolve .well-known/agent-card.json against the agent's URL,
// so a URL printed without its trailing slash sent them to
// /a2a/.well-known/agent-card.json, a 404 (both JavaScript SDK lines,
// tried by hand against make run). Checked by that resolution here and,
// where Node.js is installed, by the official A2A JavaScript SDKs
// themselves.
func TestPrintedA2AURLFindsTheCard(t *testing.T) {
	proj := t.TempDir()
	writeProjectTree(t, proj, map[string]string{"a.txt": "hello\n"})
	node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--open", proj+"=pu")

	var printed string
	testkit.Eventually(t, "serve to print the gateways of project pu", func() bool {
		sc := bufio.NewScanner(strings.NewReader(node.Logs()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				Msg string `json:"msg"`
				A2A string `json:"a2a"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "gateways of project pu" {
				printed = line.A2A
				return true
			}
		}
		return false
	})

	base, err := url.Parse(printed)
	if err != nil {
		t.Fatalf("the printed A2A URL %q: %v", printed, err)
	}
	card := base.ResolveReference(&url.URL{Path: ".well-known/agent-card.json"}).String()
	code, body := httpGet(t, card)
	var got struct {
		Name string `json:"name"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || got.Name != "pu" {
		t.Errorf("the card a client given %s looks for, %s: %d %s", printed, card, code, body)
	}

	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the A2A JavaScript SDKs' own lookup of the card is not tried (the resolution above was); install Node.js 18 or later and run make tools")
	}
	modules := filepath.Join(checkoutRoot, "bin", "a2a-client")
	for _, pkg := range []string{"a2a-sdk-0.3", "a2a-sdk-1"} {
		if _, err := os.Stat(filepath.Join(modules, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the A2A JavaScript SDK is not installed in %s: run make tools (it runs npm ci for e2e/testdata/a2a-client there)", modules)
		}
		script := `const load = require('module').createRequire(process.argv[1] + '/package.json');
const { ClientFactory } = load('` + pkg + `/client');
new ClientFactory().createFromUrl(process.argv[2]).then(
  (c) => process.stdout.write(c.agentCard.name),
  (e) => { process.stdout.write('ERROR ' + e.message); });`
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, nodeBin, "-e", script, modules, printed).CombinedOutput()
		cancel()
		if err != nil || string(out) != "pu" {
			t.Errorf("%s given %s: %v %s", pkg, printed, err, out)
		}
	}
}
