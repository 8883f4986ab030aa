package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/frontdoor"
	"github.com/jido-bus/jido-bus/projects"
)

// fullOn is a filesystem whose WAL writes fail, as on a full disk, from
// the first write that carries the bytes of match once armed: a test
// chooses which commit is the first to fail (the entry of one event
// type) without counting writes.
type fullOn struct {
	vfs.FS
	match []byte
	armed atomic.Bool
	hit   atomic.Bool // a write failed; every later one fails too
}

var errDiskFull = errors.New("no space left on device (injected)")

func (f *fullOn) wrap(file vfs.File, name string, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return file, err
	}
	return fullFile{File: file, fs: f}, nil
}

func (f *fullOn) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(file, name, err)
}

func (f *fullOn) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, c)
	return f.wrap(file, newname, err)
}

func (f *fullOn) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	return f.wrap(file, name, err)
}

type fullFile struct {
	vfs.File
	fs *fullOn
}

func (w fullFile) full(p []byte) bool {
	if w.fs.hit.Load() || (w.fs.armed.Load() && bytes.Contains(p, w.fs.match)) {
		w.fs.hit.Store(true)
		return true
	}
	return false
}

func (w fullFile) Write(p []byte) (int, error) {
	if w.full(p) {
		return 0, errDiskFull
	}
	return w.File.Write(p)
}

func (w fullFile) WriteAt(p []byte, off int64) (int, error) {
	if w.full(p) {
		return 0, errDiskFull
	}
	return w.File.WriteAt(p, off)
}

// TestToolCallOnFullDisk: a tool call is never answered with an outcome
// the log does not hold. When the start of the call cannot be committed
// the tool does not run; when its outcome cannot be, the caller hears
// unavailable and that the tool ran — over the NATS API and over MCP.
// After a restart the project's stream shows what happened.
func TestToolCallOnFullDisk(t *testing.T) {
	for _, c := range []struct {
		name, failing string
		ran           bool
		says          string
	}{
		{"start", projects.TypeToolStarted, false, "not run"},
		{"outcome", projects.TypeToolCompleted, true, "its effects"},
	} {
		for _, via := range []string{"nats", "mcp"} {
			t.Run(c.name+"/"+via, func(t *testing.T) {
				data, root := t.TempDir(), t.TempDir()
				fs := &fullOn{FS: vfs.Default, match: []byte(c.failing)}
				const token = "full-disk-token-0123456789"
				n, err := Start(context.Background(), Config{
					DataDir: data, NATS: NATSConfig{Listen: "127.0.0.1:0"}, logFS: fs,
					HTTP: HTTPConfig{Listen: "127.0.0.1:0", Options: frontdoor.Options{Tokens: map[string]string{token: "t"}}},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer n.Shutdown(context.Background())
				ctx := context.Background()
				if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
					t.Fatal(err)
				}
				fs.armed.Store(true)
				var typ, msg string
				switch via {
				case "nats":
					_, e := apiCall(t, nodeConn(t, n), "jido.api.project.tool.call",
						`{"project":"p1","id":"call-1","name":"write_file","args":{"path":"a.txt","content":"x"}}`)
					if e == nil {
						t.Fatal("the call was answered ok")
					}
					typ, msg = e.Type, e.Message
				case "mcp":
					typ, msg = mcpWrite(t, n.HTTPURL()+"/mcp/p1", token)
				}
				if typ != bus.ReasonUnavailable || !strings.Contains(msg, c.says) || !strings.Contains(msg, "disk") {
					t.Fatalf("answered %s: %s; want %s saying %q and why (the disk)", typ, msg, bus.ReasonUnavailable, c.says)
				}
				if _, err := os.Stat(filepath.Join(root, "a.txt")); (err == nil) != c.ran {
					t.Fatalf("the tool ran: %v, want %v", err == nil, c.ran)
				}
				if !fs.hit.Load() {
					t.Fatal("no write failed: the test did not test")
				}
				_ = n.Shutdown(context.Background())

				n2, err := Start(ctx, Config{DataDir: data, NATS: NATSConfig{DontListen: true}, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				defer n2.Shutdown(context.Background())
				var got []string
				for e, err := range n2.Log().ReadStream(projects.Stream("p1"), eventlog.ReadOptions{Types: "project.tool.**"}) {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, e.Event.Type())
				}
				want := map[bool]string{false: "[]", true: "[" + projects.TypeToolStarted + "]"}[c.ran]
				if fmt.Sprint(got) != want {
					t.Fatalf("after a restart project/p1 holds %v, want %s", got, want)
				}
			})
		}
	}
}

// mcpWrite calls write_file of a.txt through the MCP gateway at endpoint
// and returns the error's type and message (the test fails on success).
func mcpWrite(t *testing.T, endpoint, token string) (string, string) {
	t.Helper()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := sdk.NewClient(&sdk.Implementation{Name: "full-disk", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token, transport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) == 0 {
		t.Fatalf("the call was answered ok: %+v", res)
	}
	text, _ := res.Content[0].(*sdk.TextContent)
	var e bus.Error
	if text == nil || json.Unmarshal([]byte(text.Text), &e) != nil {
		t.Fatalf("an error result that is not {type, message}: %+v", res.Content)
	}
	return e.Type, e.Message
}

// TestAssetReloadOnFullDisk: an asset change whose record cannot be
// committed changes no tool: calls keep running the catalog the
// project's stream knows of.
func TestAssetReloadOnFullDisk(t *testing.T) {
	root := t.TempDir()
	fs := &fullOn{FS: vfs.Default, match: []byte(projects.TypeAssetsReloaded)}
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{DontListen: true}, logFS: fs,
		Projects: func(c *projects.Config) { c.NoWatch = true }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	e := n.Projects()
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".jido", "commands", "hello.md"), []byte("---\ndescription: Say hello.\n---\nHello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs.armed.Store(true)
	if _, err := e.Reload(context.Background(), "p1"); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("reload on a full disk: %v, want unavailable", err)
	}
	specs, err := e.Tools("p1")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == "command.hello" {
			t.Fatal("command.hello is offered although its reload was never recorded")
		}
	}
}
