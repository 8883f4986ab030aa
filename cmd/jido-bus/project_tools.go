package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/projectapi"
	"github.com/jido-bus/jido-bus/projects/tools"
)

func newProjectToolsCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "tools ID",
		Short: "List the tools a project's policy lets one call",
		Long: `List the tools a project's policy lets one call: the built-in file tools,
run_command when allowed, and one tool per skill (skill_<name>), command
(command_<name>, a folder's ':' as '-': command_git-commit), workflow
(workflow_<name>) and the skill graph (skill_graph_search, …), named the
same in MCP, an LLM's tool list and policy globs, and the tools of the
MCP servers its .jido/config.yaml lists (<server>.<tool>), with a line
per server saying whether it is ready. -o json prints each tool's input
schema too (project get -o json shows the servers' states).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reply projectapi.ToolsReply
			if err := projectRequest(cmd, &f, projectapi.VerbTools, projectapi.ProjectRequest{Project: args[0]}, &reply); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeList(w, "tools", reply.Tools, nil)
			}
			t := newTable(w, "NAME", "DESCRIPTION")
			for _, s := range reply.Tools {
				t.row(s.Name, oneLine(s.Description))
			}
			if err := t.flush(); err != nil {
				return err
			}
			for _, m := range reply.MCPServers {
				fmt.Fprintln(w, "MCP server "+mcpServerLine(m))
			}
			return nil
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"tools":[{"name","api_name","description","input_schema","output_schema","safety":{"reads","writes","runs"}}…],"next":null}.`)
	return cmd
}

// policyRefusals are the runner's error types that are the project's
// policy saying no: 'project call' exits with 5, like a refused role.
var policyRefusals = []string{tools.ReasonOutsideRoot, tools.ReasonDenied, tools.ReasonApprovalRequired}

func newProjectCallCmd() *cobra.Command {
	var (
		f      liveFlags
		callID string
	)
	cmd := &cobra.Command{
		Use:   "call ID TOOL [ARGS]",
		Short: "Call one of a project's tools",
		Long: `Call one of a project's tools with ARGS, a JSON object ('project tools
-o json' shows each tool's input schema; none means {}). It prints the
tool's data: read_file's file text as it is, anything else as indented
JSON; the tool's log lines go to stderr.

A refused or failed call exits non-zero with the runner's error type:
5 for what the project's policy refuses (outside_root, denied,
approval_required), 3 for not_found, 1 for the others (invalid_args,
unknown_tool, no_match, timeout, …). Every call, refused ones too, is
logged on the stream project/<id>.`,
		Example: `  jido-bus project call web read_file '{"path":"README.md"}'
  jido-bus project call web grep '{"pattern":"TODO"}'
  jido-bus project call web edit_file '{"path":"main.go","old_string":"foo","new_string":"bar"}'
  jido-bus project call web command_review '{"arguments":["HEAD~1"]}'`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := projectapi.ToolCallRequest{Project: args[0], Name: args[1], ID: callID}
			if len(args) == 3 {
				raw := bytes.TrimSpace([]byte(args[2]))
				if !json.Valid(raw) {
					return fmt.Errorf("ARGS is not valid JSON: %s (give an object such as '{\"path\":\"main.go\"}')", args[2])
				}
				if len(raw) == 0 || raw[0] != '{' {
					return fmt.Errorf("ARGS must be a JSON object such as '{\"path\":\"main.go\"}', not %s", args[2])
				}
				req.Args = raw
			}
			var reply projectapi.ToolCallReply
			if err := projectRequest(cmd, &f, projectapi.VerbToolCall, req, &reply); err != nil {
				if be, ok := errors.AsType[*bus.Error](err); ok && isPolicyRefusal(be.Type) {
					return exitError{code: exitForbidden, err: err}
				}
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), reply)
			}
			for _, l := range reply.Logs {
				fmt.Fprintln(cmd.ErrOrStderr(), l)
			}
			return printToolData(cmd.OutOrStdout(), args[1], reply.Data)
		},
	}
	f.register(cmd)
	documentJSON(cmd, `one object: {"call_id","data":…,"artifacts":[…],"logs":[…]}; a failed call prints nothing and exits non-zero.`)
	cmd.Flags().StringVar(&callID, "call-id", "", "the call's id in the log (default: a new ULID)")
	return cmd
}

func isPolicyRefusal(typ string) bool {
	for _, r := range policyRefusals {
		if typ == r {
			return true
		}
	}
	return false
}

// printToolData prints what a tool returned: read_file's content as the
// file's text, a JSON string as its text, anything else indented.
func printToolData(w io.Writer, tool string, data json.RawMessage) error {
	if len(data) == 0 {
		return nil
	}
	if tool == "read_file" {
		var r struct {
			Content *string `json:"content"`
		}
		if json.Unmarshal(data, &r) == nil && r.Content != nil {
			_, err := io.WriteString(w, *r.Content)
			return err
		}
	}
	var s string
	if json.Unmarshal(data, &s) == nil {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		_, err := io.WriteString(w, s)
		return err
	}
	return writeIndented(w, data)
}

// writeIndented writes v as indented JSON.
func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
