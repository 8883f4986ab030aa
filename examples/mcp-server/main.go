// Command mcp-server is a small MCP server over stdio, to try a
// project's mcp_servers: (README section 5) and to test them: echo
// (read-only), touch (no annotations, so taken as writing), read (reads
// any path it is given: the project's sandbox is what stops it outside
// the project), add_tool (adds the tool "late", which sends
// tools/list_changed) and crash (exits, to see the node restart it).
//
//	go build -o bin/notes-mcp ./examples/mcp-server
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type textArgs struct {
	Text string `json:"text"`
}

type pathArgs struct {
	Path string `json:"path"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text back.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Pretend to change something."},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			return text("touched " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "Read a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(a.Path)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
			}
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add the tool late."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Added later.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
					return text("late"), nil, nil
				})
			return text("added"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit at once."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
