package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/projects/mcpclient"
	"github.com/jido-bus/jido-bus/projects/policy"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// maxPolicyFileBytes bounds the --policy file read (the node's own bound
// on a policy file is the same).
const maxPolicyFileBytes = 256 << 10

// newProjectCmd is `jido-bus project`: the project engine's control plane
// (jido.api.project.*) from the command line.
func newProjectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Open projects on a running node, list their tools and assets, call tools",
		Long: `The project subcommands but init send requests to a running node's
project API (jido.api.project.<verb> on NATS) and print the reply; init
writes a starter .jido/ into a folder. A project is a
folder on the node's machine: its skills, commands, workflows and skill
graph notes under <root>/.jido, and tools (read_file, edit_file, grep,
run_command, …) confined to the folder by a policy. Everything a project
does is logged on the stream project/<id> ('jido-bus log show
project/<id>') and emitted on jido.emit.<id>.project.* ('nats sub
"jido.emit.<id>.>"').

Exit codes: 3 when the project does not exist; 5 when the node refuses
the user's role, and for 'project call' when the project's policy refuses
the call (outside_root, denied, approval_required); 1 for any other
failure of a call.`,
	}
	cmd.AddCommand(newProjectOpenCmd(), newProjectListCmd(), newProjectGetCmd(), newProjectToolsCmd(),
		newProjectAssetsCmd(), newProjectReloadCmd(), newProjectCloseCmd(), newProjectCallCmd(),
		newProjectDiagnosticsCmd(), newProjectInitCmd())
	return cmd
}

// projectRequest sends body to jido.api.project.<verb> and decodes the
// reply into result, or returns the error it carries.
func projectRequest(cmd *cobra.Command, f *liveFlags, verb string, body, result any) error {
	nc, subjects, err := f.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := f.requester(nc, subjects).Call(cmd.Context(), projectapi.Area, verb, body, result); err != nil {
		return fmt.Errorf("project %s: %w", verb, err)
	}
	return nil
}

// projectInfoShape is the JSON of open and get.
const projectInfoShape = `one object: {"id","root","data_dir","stream","policy_source","status":"open"|"error",
"error":{"type","message"},"digest","version","counts":{"skills","commands","workflows","notes"},
"diagnostics":N,"tools":N,"protection","watching":bool,
"mcp_servers":[{"name","status":"starting"|"ready"|"restarting","tools":N,"restarts":N,"error"}…]}.`

func newProjectOpenCmd() *cobra.Command {
	var (
		f          liveFlags
		id         string
		policyFile string
	)
	cmd := &cobra.Command{
		Use:   "open PATH",
		Short: "Open a folder as a project",
		Long: `Open a folder as a project: the node loads its assets, builds its tool
catalog, watches it for changes and logs it on the stream project/<id>.
The project stays open across restarts of the node until 'project close'.

PATH is resolved against this command's working directory to an absolute
path before it is sent; the node opens that path on its own machine, so
when the node runs elsewhere (another host, a container) give the path as
the node sees it.

The policy is, first to last: --policy FILE (read here, YAML: tools,
paths, commands; see the README), the project's .jido/policy.yaml, the
defaults (every tool allowed, .env files denied, no programs: run_command
and workflows are not offered until commands.programs names programs).
Keys left out keep the default: tools: {run_command: ask} leaves every
other tool allowed ("*" is the mode of the tools no entry names; an
allow-list is "*": deny plus its allows). While the project is open, an
edit of .jido/policy.yaml takes effect (see 'project reload'), unless the
project was opened with --policy, which the file never overrides.`,
		Example: `  jido-bus project open . --id web
  jido-bus project open ~/src/api --policy api-policy.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				// An unset variable ("$DIR") must not open the working directory.
				return fmt.Errorf("project path is empty: give the folder to open, '.' for this one")
			}
			root, err := filepath.Abs(args[0])
			if err != nil {
				return fmt.Errorf("project path %s: %w", args[0], err)
			}
			req := projectapi.OpenRequest{Root: root, ID: id}
			if policyFile != "" {
				if req.Policy, err = readPolicyFile(policyFile); err != nil {
					return err
				}
			}
			var info projectapi.ProjectInfo
			if err := projectRequest(cmd, &f, projectapi.VerbOpen, req, &info); err != nil {
				return err
			}
			return printProjectInfo(cmd.OutOrStdout(), f.json, info)
		},
	}
	f.register(cmd)
	documentJSON(cmd, projectInfoShape)
	cmd.Flags().StringVar(&id, "id", "", "the project's id, letters, digits, - and _ (default: a new ULID)")
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy file (YAML) to open the project with, read by this command")
	return cmd
}

// readPolicyFile reads a policy file and checks it here, where its name
// and lines mean something to the user, then sends it as JSON.
func readPolicyFile(name string) (json.RawMessage, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxPolicyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", name, err)
	}
	if len(data) > maxPolicyFileBytes {
		return nil, fmt.Errorf("--policy %s: larger than %d bytes; a policy is a few lines", name, maxPolicyFileBytes)
	}
	if _, err := policy.Load(name, data); err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", name, err)
	}
	if t := strings.TrimSpace(string(js)); t == "" || t == "null" {
		// An empty file is the defaults, as an empty policy.yaml is.
		return json.RawMessage("{}"), nil
	}
	return js, nil
}

func newProjectListCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the node's open projects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var reply projectapi.ListReply
			if err := projectRequest(cmd, &f, projectapi.VerbList, struct{}{}, &reply); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f.json {
				return writeList(w, "projects", reply.Projects, nil)
			}
			t := newTable(w, "ID", "STATUS", "SKILLS", "COMMANDS", "WORKFLOWS", "NOTES", "TOOLS", "ROOT")
			for _, p := range reply.Projects {
				t.row(p.ID, p.Status, p.Counts.Skills, p.Counts.Commands, p.Counts.Workflows, p.Counts.Notes, p.Tools, p.Root)
			}
			return t.flush()
		},
	}
	f.register(cmd)
	documentJSON(cmd, `{"projects":[…],"next":null}, each project as 'project get' prints it.`)
	return cmd
}

func newProjectGetCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Print a project: root, policy source, asset counts, tools, status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var info projectapi.ProjectInfo
			if err := projectRequest(cmd, &f, projectapi.VerbGet, projectapi.ProjectRequest{Project: args[0]}, &info); err != nil {
				return err
			}
			return printProjectInfo(cmd.OutOrStdout(), f.json, info)
		},
	}
	f.register(cmd)
	documentJSON(cmd, projectInfoShape)
	return cmd
}

func newProjectCloseCmd() *cobra.Command {
	var (
		f      liveFlags
		reason string
	)
	cmd := &cobra.Command{
		Use:   "close ID",
		Short: "Close a project: its watcher and agent stop, it is not reopened on restart",
		Long: `Close a project: its watcher and agent stop and it is not reopened when
the node restarts. Its folder and its log (project/<id>) are kept.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var reply projectapi.CloseReply
			if err := projectRequest(cmd, &f, projectapi.VerbClose, projectapi.CloseRequest{Project: args[0], Reason: reason}, &reply); err != nil {
				return err
			}
			if f.json {
				return writeJSON(cmd.OutOrStdout(), reply)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "closed %s\n", reply.Project)
			return err
		},
	}
	f.register(cmd)
	documentJSON(cmd, `one object: {"project":"<id>"}.`)
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the project's last log entry")
	return cmd
}

// printProjectInfo prints a project as JSON or as labelled lines.
func printProjectInfo(w io.Writer, asJSON bool, p projectapi.ProjectInfo) error {
	if asJSON {
		return writeJSON(w, p)
	}
	t := newTable(w, "ID:", p.ID)
	t.row("STATUS:", p.Status)
	if p.Error != nil {
		t.row("ERROR:", p.Error.Type+": "+p.Error.Message)
	}
	t.row("ROOT:", p.Root)
	t.row("DATA DIR:", p.DataDir)
	t.row("STREAM:", p.Stream)
	t.row("POLICY:", p.PolicySource)
	t.row("ASSETS:", fmt.Sprintf("%d skills, %d commands, %d workflows, %d notes (version %d)",
		p.Counts.Skills, p.Counts.Commands, p.Counts.Workflows, p.Counts.Notes, p.Version))
	t.row("DIAGNOSTICS:", p.Diagnostics)
	t.row("TOOLS:", p.Tools)
	t.row("PROTECTION:", p.Protection)
	if s := p.Sandbox; s != nil {
		rc := s.RunCommand
		if s.Reason != "" {
			rc += ": " + s.Reason
		}
		t.row("RUN_COMMAND:", rc)
		t.row("COMMANDS READ:", strings.Join(s.Reads, " ")+fmt.Sprintf(" (and their project and /tmp; %d paths hidden)", s.Hidden))
		bound := s.ProcessesBoundBy
		if bound == "" {
			bound = "nothing on this system"
		}
		t.row("COMMAND LIMITS:", s.Limits.String()+" (processes bounded by "+bound+")")
	}
	t.row("WATCHING:", p.Watching)
	for _, m := range p.MCPServers {
		t.row("MCP SERVER:", mcpServerLine(m))
	}
	return t.flush()
}

// mcpServerLine is one MCP server's state in a line: its name, status,
// tools and restarts, and why it is down.
func mcpServerLine(m mcpclient.State) string {
	line := fmt.Sprintf("%s %s, %d tools, %d restarts", m.Name, m.Status, m.Tools, m.Restarts)
	if m.Error != "" {
		line += ": " + oneLine(m.Error)
	}
	return line
}
