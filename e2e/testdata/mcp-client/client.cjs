// A client of jido-bus's MCP gateway on the official MCP TypeScript SDK,
// for e2e/clients_mcp_test.go. It connects (stdio: it launches the
// command; http: streamable HTTP to the URL), plays one session as an IDE
// would, and prints what it saw as one JSON object on stdout. A step the
// SDK refuses (it checks every result against the tool's output schema)
// is reported with its error, and the session goes on.
//
//   JIDO_MCP_MODULES=DIR node client.cjs stdio COMMAND ARG...
//   JIDO_MCP_MODULES=DIR node client.cjs http URL
//
// DIR holds the node_modules `make tools` installed (bin/mcp-client).
'use strict';
const path = require('path');
const load = require('module').createRequire(path.join(process.env.JIDO_MCP_MODULES || '.', 'package.json'));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = load('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function step(report, name, fn) {
  try {
    report[name] = await fn();
  } catch (e) {
    report[name] = { error: String(e && e.message ? e.message : e) };
  }
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const transport = mode === 'http'
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
  const client = new Client({ name: 'jido-bus-e2e', version: '1' });
  await client.connect(transport);
  const report = { capabilities: client.getServerCapabilities() };

  await step(report, 'tools', async () => (await client.listTools()).tools);
  await step(report, 'read_small', () => client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } }));
  await step(report, 'read_large', () => client.callTool({ name: 'read_file', arguments: { path: 'big.txt' } }));
  await step(report, 'artifact', async () => {
    const link = (report.read_large.content || []).find((c) => c.type === 'resource_link');
    if (!link) throw new Error('no resource_link in the large result');
    const res = await client.readResource({ uri: link.uri });
    return { link_mime: link.mimeType, read_mime: res.contents[0].mimeType, bytes: res.contents[0].text.length };
  });
  await step(report, 'command', () => client.callTool({ name: 'command_explain', arguments: { arguments: ['a.txt'], named: { topic: 'greeting', audience: 'newcomers' } } }));
  await step(report, 'workflow', () => client.callTool({ name: 'workflow_peek', arguments: { path: 'a.txt' } }));
  await step(report, 'skill', () => client.callTool({ name: 'skill_review', arguments: {} }));
  await step(report, 'old_name', () => client.callTool({ name: 'command.explain', arguments: {} }));
  await step(report, 'prompts', async () => (await client.listPrompts()).prompts);
  await step(report, 'complete_prompt', async () => (await client.complete({ ref: { type: 'ref/prompt', name: 'explain' }, argument: { name: 'arguments', value: 'bi' } })).completion);
  await step(report, 'complete_skill', async () => {
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    const skill = templates.find((t) => t.name === 'skill');
    return (await client.complete({ ref: { type: 'ref/resource', uri: skill.uriTemplate }, argument: { name: 'name', value: 'r' } })).completion;
  });
  process.stdout.write(JSON.stringify(report) + '\n');
  await client.close();
}

main().catch((e) => {
  process.stderr.write('mcp client: ' + (e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
