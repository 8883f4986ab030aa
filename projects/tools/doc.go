// Package tools is a project's tool catalog and the one Runner every tool
// call goes through.
//
// A Catalog is an immutable set of Tools: the built-ins over the project's
// policy.Sandbox (read_file, list_dir, glob, grep, write_file, edit_file,
// and run_command, which runs a listed program through policy.Exec),
// the tools derived from its assets (command_<name>, skill_<name>,
// workflow_<name>, skill_graph_*: assets.ToolName) and custom tools
// registered in Go. Each
// tool carries a draft 2020-12 input and output JSON Schema, compiled once
// when the catalog is built.
//
// Runner.Run is the only way a tool runs. In order it: finds the tool
// (unknown_tool), validates the args against the input schema
// (invalid_args), authorizes the tool through the policy (denied,
// approval_required — an "ask" tool is reported, never run), waits for a
// slot of the project's concurrency limit (busy when the caller's context
// ends first), runs the tool under its timeout (timeout), and hands an
// output over the cap to an ArtifactStore. Path refusals (outside_root,
// denied) come from the Sandbox the tool uses for every file it touches.
// Every call, refused or not, is reported to the Observer: its start,
// then exactly one of ToolCompleted or ToolFailed. The start of a call
// that may change something (ToolStarted) is recorded before the tool
// runs, and such a call whose start the Observer cannot record does not
// run; a call that changes nothing (a tool declaring it only reads, or a
// refusal) has its start recorded with its outcome, after it ran. A call
// whose outcome cannot be recorded is answered unavailable (see
// Observer).
package tools
