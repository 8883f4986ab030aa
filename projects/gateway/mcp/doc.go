// Package mcp (imported as mcpgw) serves the projects of a node over the
// Model Context Protocol, on the official go-sdk: streamable HTTP
// (Handler: /mcp for every project, /mcp/{project} for one) and stdio
// (ServeStdio). It only translates; it holds no state the log does not:
//
//   - tools/list is the project's catalog as its policy offers it, with
//     input and output schemas and annotations from the tool's Safety
//     (readOnlyHint: reads only; destructiveHint: writes or runs;
//     idempotentHint: read-only; openWorldHint: runs programs);
//   - tools/call is a call through the project's runner (Host.CallTool,
//     the only path a tool runs by): the output is structuredContent (an
//     object) and, as text, the member the tool names its text
//     (read_file's content, a skill's body) or else the output's JSON; an
//     output the runner stored as an artifact is its stand-in
//     {"artifact","size","preview"} as structuredContent — every listed
//     output schema admits it (anyOf), since clients check each result
//     against it — a text naming it with a preview, and a resource_link
//     readable with resources/read, of the same media type; a failure or
//     a refusal is isError: true with a text block
//     {"type":…,"message":…,"details":…}, the runner's error;
//   - a tool whose policy mode is ask is approved by a person through MCP
//     elicitation (a form with one boolean, approve) when the client can
//     elicit, and refused (approval_required, isError) when it cannot;
//   - prompts are the project's commands: arguments are the command's
//     {{name}} placeholders (required) and, when its body uses $ARGUMENTS
//     or $1…$9, one argument "arguments" (described by its argument-hint)
//     split on blanks into the positional ones; prompts/get is a call of
//     the command_<name> tool through the runner (which reads @file
//     includes through the policy);
//   - completion/complete offers a prompt argument the project's paths
//     (as its list_dir would show them; "arguments" completes its last
//     word) and a resource template's variables what exists (projects,
//     skills, notes, the artifacts this server named); it is not recorded;
//   - resources are skills (jido://<project>/skills/<name>, the SKILL.md
//     body) and skill-graph notes (jido://<project>/notes/<id>), both also
//     as resource templates, and artifacts of tool results
//     (jido://<project>/artifacts/<id>, readable only once a result of
//     this gateway named them);
//   - notifications/tools/list_changed, prompts/list_changed and
//     resources/list_changed follow Host.OnAssetsChanged (an asset reload,
//     a project opened or closed, which is how its policy changes).
//
// Naming on /mcp (every project): a tool is "<project>.<tool>", a prompt
// "<project>.<command>" (project ids hold no '.', so the first '.' splits
// them); resource URIs name their project already. On /mcp/{project} and
// on stdio a tool is its catalog name (read_file, command_review,
// command_git-commit, skill_review: assets.ToolName), the same an LLM
// and a policy glob see; a custom tool whose name is not a valid MCP
// tool name (1–128 of A-Z a-z 0-9 _ - .) goes by its API name.
//
// Every request that names a project is recorded in its stream as
// project.gateway.request: tools/call (committed with the call's outcome,
// in the same append: tools.ToolCall.WithOutcome), and through
// Host.RecordGatewayRequest prompts/get and resources/read everywhere, and the list methods on
// /mcp/{project} and stdio (the all-projects lists name no one project).
// A request that names an unknown tool of an open project is recorded
// too (result unknown_tool) before the protocol error answers it. A
// request whose record cannot be committed is not answered as a success:
// it fails unavailable, as a tool call whose outcome the log lacks does.
package mcp
