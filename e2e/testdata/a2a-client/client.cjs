// A client of jido-bus's A2A gateway on the official A2A JavaScript SDK,
// for e2e/clients_a2a_test.go: the 0.3 line (@a2a-js/sdk 0.3.x, A2A 0.3)
// or the 1.0 line (@a2a-js/sdk 1.x, A2A 1.0), both pinned by
// package-lock.json. Given an agent's URL it finds the card as the SDK
// does, then plays a session and prints what it saw as one JSON object on
// stdout. Each stream is folded into a task by the SDK's own task
// manager (ResultManager, which applies A2A's append semantics), so the
// report says what a client that follows the protocol ends up holding,
// beside what GetTask returns. A step the SDK refuses is reported with
// its error and the session goes on.
//
//   JIDO_A2A_MODULES=DIR JIDO_A2A_TOKEN=T node client.cjs 0.3|1 AGENT-URL
//
// DIR holds the node_modules `make tools` installed (bin/a2a-client);
// the token, if any, is sent on every call but not when the card is
// fetched.
'use strict';
const path = require('path');
const load = require('module').createRequire(path.join(process.env.JIDO_A2A_MODULES || '.', 'package.json'));

const [line, agentURL] = process.argv.slice(2);
const token = process.env.JIDO_A2A_TOKEN || '';
const pkg = line === '0.3' ? 'a2a-sdk-0.3' : 'a2a-sdk-1';
const { ClientFactory, JsonRpcTransportFactory } = load(pkg + '/client');
const { ResultManager, InMemoryTaskStore, ServerCallContext } = load(pkg + '/server');

const authFetch = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (token) headers.set('Authorization', 'Bearer ' + token);
  return fetch(url, { ...init, headers });
};

// The two lines' shapes differ (0.3: JSON Schema objects with kind; 1.0:
// protobuf-style objects with oneofs as {$case, value}); v turns them
// into one form for the report.
const v03 = line === '0.3';
const states1 = ['unspecified', 'submitted', 'working', 'completed', 'failed', 'canceled', 'input-required', 'rejected', 'auth-required'];
const v = {
  message(text, ids = {}) {
    const id = 'm-' + Math.random().toString(36).slice(2);
    return v03
      ? { kind: 'message', messageId: id, role: 'user', parts: [{ kind: 'text', text }], ...ids }
      : { messageId: id, role: 1, parts: [{ content: { $case: 'text', value: text } }], ...ids };
  },
  text(parts) {
    return (parts || []).map((p) => (v03 ? (p.kind === 'text' ? p.text : '') : (p.content && p.content.$case === 'text' ? p.content.value : ''))).join('');
  },
  data(parts) {
    return (parts || []).some((p) => (v03 ? p.kind === 'data' : p.content && p.content.$case === 'data'));
  },
  state(s) {
    return v03 ? s : states1[s] || String(s);
  },
  role(r) {
    return v03 ? r : r === 1 ? 'user' : r === 2 ? 'agent' : String(r);
  },
  // event returns the stream event as {kind, data} for the ResultManager
  // of its line.
  event(ev) {
    if (v03) return { kind: ev.kind, data: ev, rm: ev };
    const kind = ev.payload.$case;
    return { kind: { statusUpdate: 'status-update', artifactUpdate: 'artifact-update' }[kind] || kind, data: ev.payload.value, rm: { kind, data: ev.payload.value } };
  },
  task(t) {
    if (!t) return null;
    return {
      id: t.id,
      contextId: t.contextId,
      state: v.state(t.status && t.status.state),
      statusText: t.status && t.status.message ? v.text(t.status.message.parts) : '',
      artifacts: (t.artifacts || []).map((a) => ({ id: a.artifactId, text: v.text(a.parts) })),
      history: (t.history || []).filter((m) => !v.data(m.parts)).map((m) => ({ role: v.role(m.role), text: v.text(m.parts) })),
    };
  },
};

async function step(report, name, fn) {
  try {
    report[name] = await fn();
  } catch (e) {
    report[name] = { error: String(e && e.message ? e.message : e) };
  }
}

// fold runs a stream into the task manager rm, and returns the task id
// and what the stream sent. stopAfter(event) ends the stream early.
async function fold(rm, stream, stopAfter) {
  const seen = { id: '', updates: [], statuses: [] };
  for await (const raw of stream) {
    const ev = v.event(raw);
    if (ev.kind === 'task') seen.id = ev.data.id;
    if (ev.kind === 'artifact-update') {
      seen.updates.push({ id: ev.data.artifact.artifactId, append: !!ev.data.append, last: !!ev.data.lastChunk, text: v.text(ev.data.artifact.parts) });
    }
    if (ev.kind === 'status-update') {
      const m = ev.data.status.message;
      seen.statuses.push({ state: v.state(ev.data.status.state), text: m && !v.data(m.parts) ? v.text(m.parts) : '' });
    }
    await rm.processEvent(ev.rm);
    if (stopAfter && stopAfter(ev)) break;
  }
  return seen;
}

function folded(rm) {
  return v.task(v03 ? rm.getCurrentTask() : rm.getFinalResult());
}

function taskManager() {
  return new ResultManager(new InMemoryTaskStore(), new ServerCallContext());
}

async function main() {
  const report = { line };
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] });
  let client;
  // The card: fetched by the SDK from the agent's URL alone, without a
  // token, as a client that has only the URL does.
  await step(report, 'card', async () => {
    client = await factory.createFromUrl(agentURL);
    const card = client.agentCard;
    return {
      name: card.name,
      skills: (card.skills || []).map((s) => s.id),
      securitySchemes: card.securitySchemes || null,
      security: card.security || card.securityRequirements || null,
      extended: v03 ? !!card.supportsAuthenticatedExtendedCard : !!(card.capabilities && card.capabilities.extendedAgentCard),
    };
  });
  if (!client) {
    process.stdout.write(JSON.stringify(report) + '\n');
    return;
  }
  await step(report, 'extended_card', async () => {
    const card = await client.getAgentCard();
    return { skills: (card.skills || []).map((s) => s.id) };
  });

  // A task streamed to its end, folded, then read back.
  const rm = taskManager();
  let first = '';
  let context = '';
  await step(report, 'stream', async () => {
    const seen = await fold(rm, client.sendMessageStream({ message: v.message('What does a.txt say?') }));
    first = seen.id;
    const task = folded(rm);
    context = task.contextId;
    return { ...seen, folded: task };
  });
  await step(report, 'get', async () => v.task(await client.getTask({ id: first })));

  // A second message in the context: a new task; the first stays as it
  // ended.
  await step(report, 'follow_up', async () => {
    const res = await client.sendMessage({ message: v.message('And a second question?', { contextId: context }) });
    return v.task(res);
  });
  await step(report, 'get_after_follow_up', async () => v.task(await client.getTask({ id: first })));
  await step(report, 'send_to_ended', async () => v.task(await client.sendMessage({ message: v.message('more?', { taskId: first, contextId: context }) })));
  await step(report, 'subscribe_to_ended', async () => {
    for await (const raw of client.resubscribeTask({ id: first })) {
      return { event: v.event(raw).kind };
    }
    return { ended: true };
  });

  // A slow task: the client leaves after the first piece of its first
  // answer, then subscribes again and follows it to its end.
  const rm2 = taskManager();
  let slow = '';
  await step(report, 'left', async () => {
    const seen = await fold(rm2, client.sendMessageStream({ message: v.message('Look again, slowly.', { contextId: context }) }), (ev) => ev.kind === 'artifact-update');
    slow = seen.id;
    return seen;
  });
  await step(report, 'resubscribed', async () => {
    const seen = await fold(rm2, client.resubscribeTask({ id: slow }));
    return { ...seen, folded: folded(rm2) };
  });
  await step(report, 'get_slow', async () => v.task(await client.getTask({ id: slow })));
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
