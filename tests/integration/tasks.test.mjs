// MCP tasks (extension io.modelcontextprotocol/tasks, 2026-07-28; issue 16): a terminal_execute
// of a request that declares the extension and still runs after ~2 s answers with a task;
// tasks/get gives its status and, once done, the result a plain call gives; tasks/cancel kills
// the command (no process of it left in the computer); tasks/update is acknowledged and changes nothing; unknown,
// expired and other sessions' task ids get -32602; past the per-session quota a call is answered plainly.
// Driven with raw JSON-RPC over stdio and Streamable HTTP (the SDK v2 client 2.4.0 has no tasks
// client), and across an edge restart in the split layout (tasks live in the session service).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  RawServer, MSC_BIN, REPO, cid, containerName, containerOf, cleanupContainers, containerProcesses,
  sleep, waitFor, waitExit, TOOL, freePort
} from './lib.mjs';

const MODERN = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } } };
const META_PLAIN = { 'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {} };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const FLAGS = ['--timeout', '60', '--no-network'];

const procs = new Set();
// Sanitizer reports (ASan/UBSan builds) on an HTTP server's stderr fail the file (RawServer
// checks its own).
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const stderrs = [];
after(async () => {
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 10000); }
  }));
  await cleanupContainers();
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
});

/** A CreateTaskResult: flat, working, no result. */
function assertCreated(r, label) {
  assert.equal(r.resultType, 'task', `${label}: ${JSON.stringify(r)}`);
  assert.match(r.taskId, /^[0-9a-f]{32}$/, '128 random bits');
  assert.equal(r.status, 'working');
  assert.match(r.createdAt, ISO);
  assert.match(r.lastUpdatedAt, ISO);
  assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs > 0, 'ttlMs a positive integer');
  assert.ok(Number.isInteger(r.pollIntervalMs) && r.pollIntervalMs > 0);
  for (const k of ['result', 'error', 'task', 'content', 'ttl', 'pollInterval']) assert.ok(!(k in r), `no ${k}`);
}

const hasProc = async (ctr, needle) => (await containerProcesses(ctr)).some((l) => l.includes(needle));

/** tasks/get and friends over one transport: `rpc(method, params, meta)` returns the JSON-RPC reply. */
function tasksApi(rpc) {
  return {
    call: (args, meta = META) => rpc('tools/call', { name: TOOL, arguments: args }, meta),
    get: (taskId, meta = META) => rpc('tasks/get', { taskId }, meta),
    cancel: (taskId, meta = META) => rpc('tasks/cancel', { taskId }, meta),
    update: (taskId) => rpc('tasks/update', { taskId, inputResponses: {} }, META),
    async until(taskId, status, timeoutMs = 20000) {
      let last;
      const ok = await waitFor(async () => {
        last = await rpc('tasks/get', { taskId }, META);
        return last.result?.status === status;
      }, { timeoutMs, intervalMs: 300 });
      assert.ok(ok, `task never ${status}: ${JSON.stringify(last)}`);
      return last.result;
    },
  };
}

/** The acceptance cases every transport runs. */
function lifecycleCases(label, getApi, computer, getBase = () => ({ computer_id: computer })) {
  describe(`tasks over ${label}`, () => {
    it('a long command returns a task at once; tasks/get later gives its result', async () => {
      const api = getApi();
      const t0 = Date.now();
      const created = await api.call({ command: 'sleep 4; echo done', ...getBase() });
      assert.ok(Date.now() - t0 < 10000, 'answered before the command ended');
      assertCreated(created.result, 'tools/call');
      const id = created.result.taskId;
      const now = await api.get(id);
      assert.equal(now.result.resultType, 'complete');
      assert.equal(now.result.status, 'working', JSON.stringify(now));
      assert.ok(!('result' in now.result));
      const done = await api.until(id, 'completed');
      assert.equal(done.taskId, id);
      assert.equal(done.result.isError, false, JSON.stringify(done));
      assert.equal(done.result.structuredContent.stdout, 'done\n');
      assert.equal(done.result.structuredContent.exit_code, 0);
      assert.ok(!('_meta' in done.result) || !done.result._meta['io.modelcontextprotocol/related-task']);
      // the plain call's result, byte for byte in its text block; over stateless HTTP without
      // the sandbox_handle the call named: a task id alone reveals no handle (issue 27)
      const plain = await api.call({ command: 'echo done', ...getBase() }, META_PLAIN);
      const named = getBase().sandbox_handle;
      assert.deepEqual(Object.keys(done.result.structuredContent),
        Object.keys(plain.result.structuredContent).filter((k) => !named || k !== 'sandbox_handle'));
      if (named) assert.doesNotMatch(JSON.stringify(done), new RegExp(named));
      await sleep(500);
      const again = await api.get(id);
      assert.equal(again.result.status, 'completed', 'still readable after it finished');
    });

    it('a short command, or a request without the extension, gets the plain result', async () => {
      const api = getApi();
      const fast = await api.call({ command: 'echo quick', ...getBase() });
      assert.equal(fast.result.resultType, 'complete');
      assert.equal(fast.result.structuredContent.stdout, 'quick\n');
      assert.ok(!('taskId' in fast.result));
      const slow = await api.call({ command: 'sleep 3; echo plain', ...getBase() }, META_PLAIN);
      assert.equal(slow.result.resultType, 'complete', JSON.stringify(slow));
      assert.equal(slow.result.structuredContent.stdout, 'plain\n');
    });

    it('tasks/cancel kills the command: no process of it is left', async () => {
      const api = getApi();
      const ctr = containerName(computer);
      const created = await api.call({ command: 'sleep 31; echo never', ...getBase() });
      assertCreated(created.result, 'tools/call');
      const id = created.result.taskId;
      assert.ok(await hasProc(ctr, 'sleep 31'), 'the command runs');
      const ack = await api.cancel(id);
      assert.deepEqual(Object.keys(ack.result).filter((k) => k !== '_meta'), ['resultType'], JSON.stringify(ack));
      assert.equal(ack.result.resultType, 'complete');
      assert.ok(await waitFor(async () => !(await hasProc(ctr, 'sleep 31')), { timeoutMs: 2000, intervalMs: 100 }),
        'no process of the command left');
      const after = await api.until(id, 'cancelled', 5000);
      assert.ok(!('result' in after));
      const twice = await api.cancel(id);
      assert.equal(twice.result.resultType, 'complete', 'cancelling a finished task: the same ack');
      const next = await api.call({ command: 'echo still-here', ...getBase() }, META_PLAIN);
      assert.equal(next.result.structuredContent.stdout, 'still-here\n', 'the computer is untouched');
    });

    it('unknown ids and requests without the extension are refused; tasks/update is acknowledged', async () => {
      const api = getApi();
      const unknown = await api.get('0123456789abcdef0123456789abcdef');
      assert.equal(unknown.error?.code, -32602, JSON.stringify(unknown));
      assert.match(unknown.error.message, /Task not found/);
      assert.equal((await api.cancel('nope')).error?.code, -32602);
      const created = await api.call({ command: 'sleep 3', ...getBase() });
      assertCreated(created.result, 'tools/call');
      // A command asks for no input: every key is unknown, and ignored (the extension's rule).
      const upd = await api.update(created.result.taskId);
      assert.equal(upd.result?.resultType, 'complete', JSON.stringify(upd));
      assert.equal(upd.result.status, undefined, 'an acknowledgement, not the task');
      assert.equal((await api.update('0123456789abcdef0123456789abcdef')).error?.code, -32602);
      assert.equal((await api.update('nope')).error?.code, -32602);
      const gated = await api.get(created.result.taskId, META_PLAIN);
      assert.equal(gated.error?.code, -32021, JSON.stringify(gated));
      assert.deepEqual(gated.error.data, { requiredCapabilities: { extensions: { [EXT]: {} } } });
      await api.until(created.result.taskId, 'completed');
    });
  });
}

// ---- stdio ----

let raw;
let rawId = 1;
const stdioRpc = (method, params, meta) => raw.request(method, { ...params, _meta: meta },
  { id: rawId++, timeoutMs: 30000 });

describe('stdio', () => {
  before(() => { raw = new RawServer(FLAGS); });
  after(async () => { await raw?.close(); });
  lifecycleCases('stdio', () => tasksApi(stdioRpc), cid('task-stdio'));

  it('server/discover declares the extension', async () => {
    const d = await raw.request('server/discover', { _meta: META_PLAIN }, { id: rawId++ });
    assert.deepEqual(d.result.capabilities.extensions[EXT], {});
    assert.ok(!('tasks' in d.result.capabilities), 'never the legacy capabilities.tasks');
  });

  it('subscriptions/listen with taskIds pushes notifications/tasks, then ends', async () => {
    const api = tasksApi(stdioRpc);
    const created = await api.call({ command: 'sleep 3; echo pushed', computer_id: cid('task-stdio') });
    const id = created.result.taskId;
    const lid = rawId++;
    const from = raw.messages.length;
    await raw.send({ jsonrpc: '2.0', id: lid, method: 'subscriptions/listen',
      params: { notifications: { taskIds: [id] }, _meta: META } });
    const end = await raw.response(lid, 20000);
    assert.equal(end.result.resultType, 'complete');
    assert.equal(end.result._meta['io.modelcontextprotocol/subscriptionId'], lid);
    const seen = raw.messages.slice(from).filter((m) => m && !('id' in m));
    assert.equal(seen[0].method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(seen[0].params.notifications, { taskIds: [id] });
    const pushed = seen.filter((m) => m.method === 'notifications/tasks');
    assert.deepEqual(pushed.map((m) => m.params.status), ['working', 'completed'], JSON.stringify(seen));
    for (const m of pushed) {
      assert.equal(m.params._meta['io.modelcontextprotocol/subscriptionId'], lid);
      assert.equal(m.params.taskId, id);
    }
    assert.equal(pushed[1].params.result.structuredContent.stdout, 'pushed\n');
    const plain = await raw.request('subscriptions/listen', { notifications: { taskIds: [id] }, _meta: META_PLAIN }, { id: rawId++ });
    assert.equal(plain.error?.code, -32021, 'taskIds without the extension');
  });

  it('notifications/cancelled naming the tools/call of a task cancels nothing', async () => {
    const api = tasksApi(stdioRpc);
    const callId = rawId;
    const created = await api.call({ command: 'sleep 34', computer_id: cid('task-stdio') });
    assertCreated(created.result, 'tools/call');
    await raw.notify('notifications/cancelled', { requestId: callId, reason: 'not for tasks' });
    await sleep(1500);
    assert.ok(await hasProc(containerName(cid('task-stdio')), 'sleep 34'), 'still running');
    assert.equal((await api.get(created.result.taskId)).result.status, 'working');
    await api.cancel(created.result.taskId);
    await api.until(created.result.taskId, 'cancelled', 5000);
  });

  it('another connection cannot read this one\'s task', async () => {
    const api = tasksApi(stdioRpc);
    const created = await api.call({ command: 'sleep 3', computer_id: cid('task-stdio') });
    const other = new RawServer(FLAGS);
    try {
      const r = await other.request('tasks/get', { taskId: created.result.taskId, _meta: META }, { id: 1 });
      assert.equal(r.error?.code, -32602, JSON.stringify(r));
    } finally { await other.close(); }
    await api.until(created.result.taskId, 'completed');
  });
});

describe('stdio quotas and expiry', () => {
  it('past --max-session-tasks a call is answered plainly; a finished task is gone after its ttlMs', async () => {
    const s = new RawServer([...FLAGS, '--max-session-tasks', '1', '--task-ttl', '1']);
    let n = 1;
    const api = tasksApi((method, params, meta) => s.request(method, { ...params, _meta: meta }, { id: n++ }));
    try {
      const computer = cid('task-quota');
      const a = await api.call({ command: 'sleep 3', computer_id: computer, timeout: 8 });
      assertCreated(a.result, 'first');
      assert.equal(a.result.ttlMs, 9000, 'the command timeout plus --task-ttl');
      const b = await api.call({ command: 'sleep 2.5; echo plain', computer_id: computer });
      assert.equal(b.result?.isError, false, JSON.stringify(b));
      assert.equal(b.result.task, undefined, 'no task past the quota');
      assert.equal(b.result.structuredContent.stdout, 'plain\n', JSON.stringify(b));
      await api.until(a.result.taskId, 'completed');
      await waitFor(async () => (await api.get(a.result.taskId)).error?.code === -32602,
        { timeoutMs: 12000, intervalMs: 500 });
      const gone = await api.get(a.result.taskId);
      assert.equal(gone.error?.code, -32602, 'expired');
      const c = await api.call({ command: 'sleep 3', computer_id: computer });
      assertCreated(c.result, 'after expiry the quota has room');
      await api.until(c.result.taskId, 'completed');
    } finally { await s.close(); }
  });
});

// ---- HTTP ----

async function startHttp(extra = []) {
  const port = await freePort();
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...FLAGS, ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'], env });
  procs.add(proc);
  let err = '';
  const box = { text: '' };
  stderrs.push(box);
  proc.stderr.on('data', (c) => { err = (err + c).slice(-20000); box.text = (box.text + c).slice(-200000); });
  assert.ok(await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok,
    { timeoutMs: 20000, intervalMs: 100 }), `server not ready: ${err}`);
  return { port, proc };
}

/** A modern POST whose headers mirror the body (Mcp-Name the tool or the taskId). */
async function post(port, method, params, meta, { headers = {} } = {}) {
  const name = params.name ?? params.taskId;
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...(name ? { 'Mcp-Name': name } : {}), ...headers };
  for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }) });
  const text = await res.text();
  const body = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6)) : JSON.parse(text);
  return { status: res.status, ...body };
}

let http;
describe('HTTP', () => {
  let handle;
  before(async () => {
    http = await startHttp();
    // stateless HTTP: a call without a sandbox_handle mints one; the rest pass it back
    const first = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'true', computer_id: cid('task-http') } }, META_PLAIN);
    handle = first.result.structuredContent.sandbox_handle;
    assert.ok(handle, JSON.stringify(first));
  });
  lifecycleCases('HTTP', () => tasksApi((m, p, meta) => post(http.port, m, p, meta)), cid('task-http'),
    () => ({ sandbox_handle: handle }));

  it('subscriptions/listen streams notifications/tasks over SSE as they come', async () => {
    const created = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'sleep 4; echo sse', sandbox_handle: handle } }, META);
    const id = created.result.taskId;
    const res = await fetch(`http://127.0.0.1:${http.port}/mcp`, { method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'subscriptions/listen',
        params: { notifications: { taskIds: [id] }, _meta: META } }) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const reader = res.body.getReader();
    const events = [];
    let buf = '';
    let firstAt = null;
    const t0 = Date.now();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString('utf8');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const data = buf.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
        buf = buf.slice(i + 2);
        if (data) { events.push(JSON.parse(data.slice(6))); firstAt ??= Date.now() - t0; }
      }
    }
    assert.ok(firstAt < 2000, `the acknowledgement came at once (${firstAt} ms), not with the end`);
    assert.equal(events[0].method, 'notifications/subscriptions/acknowledged');
    const pushed = events.filter((m) => m.method === 'notifications/tasks');
    assert.deepEqual(pushed.map((m) => m.params.status), ['working', 'completed']);
    assert.equal(pushed[1].params.result.structuredContent.stdout, 'sse\n');
    assert.equal(events.at(-1).id, 9, 'the response ends the stream');
  });

  it('a subscriptions/listen stream whose client leaves ends: its slot is free again', async () => {
    const created = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'sleep 40', sandbox_handle: handle } }, META);
    const taskId = created.result.taskId;
    // Opens a listen stream; resolves with its first message (the acknowledgement or the error).
    const open = (rid, ac) => fetch(`http://127.0.0.1:${http.port}/mcp`, { method: 'POST', signal: ac.signal,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id: rid, method: 'subscriptions/listen',
        params: { notifications: { taskIds: [taskId] }, _meta: META } }) })
      .then(async (res) => {
        if (!/^text\/event-stream/.test(res.headers.get('content-type') ?? '')) return res.json();
        const reader = res.body.getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return null;
          buf += Buffer.from(value).toString('utf8');
          const i = buf.indexOf('\n\n');
          if (i >= 0) return JSON.parse(buf.slice(0, i).split('\n').find((l) => l.startsWith('data: ')).slice(6));
        }
      });
    const LIMIT = 64;   // the edge's streams at most (mcp_tasks_listen.c)
    const streams = Array.from({ length: LIMIT }, () => new AbortController());
    const acks = await Promise.all(streams.map((ac, i) => open(100 + i, ac)));
    assert.ok(acks.every((m) => m?.method === 'notifications/subscriptions/acknowledged'), JSON.stringify(acks.find((m) => m?.method !== 'notifications/subscriptions/acknowledged')));
    const extra = new AbortController();
    const refused = await open(99, extra);
    assert.match(refused.error?.message ?? '', /Too many task subscriptions/, 'the edge is full');
    for (const ac of streams) ac.abort();
    // each ends at its next round (about a second), with its task still working
    let again = null;
    assert.ok(await waitFor(async () => {
      const ac = new AbortController();
      again = await open(98, ac).catch((e) => ({ e: String(e) }));
      ac.abort();
      return again?.method === 'notifications/subscriptions/acknowledged';
    }, { timeoutMs: 8000, intervalMs: 500 }), `a new stream is taken once the others left: ${JSON.stringify(again)}`);
    const cancelled = await post(http.port, 'tasks/cancel', { taskId }, META);
    assert.ok(!cancelled.error, JSON.stringify(cancelled));
  });

  it('tasks/get is routed by Mcp-Name: a missing or different one is 400/-32020', async () => {
    const created = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'sleep 3', sandbox_handle: handle } }, META);
    assertCreated(created.result, 'tools/call');
    const id = created.result.taskId;
    const wrong = await post(http.port, 'tasks/get', { taskId: id }, META, { headers: { 'Mcp-Name': 'other' } });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.error.code, -32020);
    const none = await post(http.port, 'tasks/get', { taskId: id }, META, { headers: { 'Mcp-Name': undefined } });
    assert.equal(none.status, 400);
    for (const removed of ['tasks/result', 'tasks/list']) {
      const r = await post(http.port, removed, { taskId: id }, META);
      assert.equal(r.status, 404, `${removed}: removed in the extension`);
      assert.equal(r.error.code, -32601);
    }
    const gated = await post(http.port, 'tasks/get', { taskId: id }, META_PLAIN);
    assert.equal(gated.status, 400, 'without the extension: 400');
    assert.equal(gated.error.code, -32021);
    await tasksApi((m, p, meta) => post(http.port, m, p, meta)).until(id, 'completed');
  });
});

describe('HTTP at 2026-07-28: a closed response stream cancels the call', () => {
  const CASES = [
    ['with its sandbox_handle', { withHandle: true, needle: 'sleep 32', suffix: 'h' }],
    ['with a handle minted for it', { withHandle: false, needle: 'sleep 33', suffix: 'm' }],
    // stateless: no handle, a progressToken, the reply an SSE stream when the client goes
    ['with a handle minted for it, a progressToken and an SSE reply',
      { withHandle: false, needle: 'sleep 34', suffix: 'p', progress: true }],
  ];
  for (const [label, { withHandle, needle, suffix, progress }] of CASES) {
    it(`kills the command (${label}); nothing else is touched`, async () => {
      const computer = cid(`close-${suffix}`);
      const first = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'true', computer_id: computer } }, META_PLAIN);
      const h = first.result.structuredContent.sandbox_handle;
      const target = withHandle ? computer : `${computer}-x`;
      const command = progress ? `echo started; ${needle}` : needle;
      const args = withHandle ? { command, sandbox_handle: h } : { command, computer_id: target };
      const meta = progress ? { ...META_PLAIN, progressToken: 'close-p' } : META_PLAIN;
      const ctr = containerName(target);
      const ac = new AbortController();
      let type = null;
      const events = [];
      const res = fetch(`http://127.0.0.1:${http.port}/mcp`, { method: 'POST', signal: ac.signal,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': TOOL },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: TOOL, arguments: args, _meta: meta } }) })
        .then(async (r) => {
          type = r.headers.get('content-type');
          const dec = new TextDecoder();
          let buf = '';
          for await (const chunk of r.body) {
            buf += dec.decode(chunk, { stream: true });
            for (let i; (i = buf.indexOf('\n\n')) >= 0; buf = buf.slice(i + 2)) {
              const data = buf.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
              if (data) events.push(JSON.parse(data.slice(6)));
            }
          }
          return 'answered';
        }).catch((e) => e.name);
      assert.ok(await waitFor(async () => (await containerOf(target)) !== null
        && hasProc(ctr, needle), { timeoutMs: 30000, intervalMs: 200 }), 'the command runs');
      if (progress) {
        assert.ok(await waitFor(async () => events.some((m) => m.method === 'notifications/progress'),
          { timeoutMs: 10000, intervalMs: 100 }), 'a progress notification came first');
        assert.match(type ?? '', /^text\/event-stream/, 'the reply is an SSE stream');
        assert.equal(events.find((m) => m.method === 'notifications/progress').params.progressToken, 'close-p');
      }
      ac.abort();
      assert.equal(await res, 'AbortError');
      assert.ok(!events.some((m) => m.id === 1), 'no result came before the close');
      const t0 = Date.now();
      // a minted handle nobody learnt goes with its temporary computer
      assert.ok(await waitFor(async () => !(await hasProc(ctr, needle).catch(() => false)), { timeoutMs: 5000, intervalMs: 100 }),
        'no process of the command left');
      assert.ok(Date.now() - t0 < 3000, `killed within a few seconds (${Date.now() - t0} ms)`);
      if (!withHandle) {
        assert.ok(await waitFor(async () => (await containerOf(target)) === null, { timeoutMs: 10000, intervalMs: 200 }),
          'the computer of the handle nobody learnt goes too');
      } else {
        const next = await post(http.port, 'tools/call', { name: TOOL, arguments: { command: 'echo alive', sandbox_handle: h } }, META_PLAIN);
        assert.equal(next.result.structuredContent.stdout, 'alive\n', 'the computer and its handle are untouched');
      }
    });
  }
});

// ---- split layout: the task outlives the edge that made it ----

describe('split layout', () => {
  it('a task made on one HTTP edge is read on a restarted edge', async () => {
    const port = await freePort();
    const split = spawn(path.join(REPO, 'scripts', 'run-split'),
      ['--transport', 'http', '--port', String(port), ...FLAGS],
      { env: { ...process.env, KILNTAINERS_AUTH_TOKEN: '' }, stdio: ['pipe', 'ignore', 'ignore'] });
    procs.add(split);
    let edge;
    try {
      assert.ok(await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok,
        { timeoutMs: 20000 }));
      // a second edge (the first one's command line on another port): run-split ends every
      // service when its own edge exits, so the second one is the edge that restarts
      const pid = Number(execFileSync('pgrep', ['-f', `msc-edge .*--port ${port}`]).toString().trim().split('\n')[0]);
      const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
      const port2 = await freePort();
      argv[argv.indexOf('--port') + 1] = String(port2);
      const up = async () => {
        edge = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
        procs.add(edge);
        assert.ok(await waitFor(async () => (await fetch(`http://127.0.0.1:${port2}/healthz`).catch(() => null))?.ok,
          { timeoutMs: 15000 }));
      };
      await up();
      const created = await post(port2, 'tools/call', { name: TOOL, arguments: { command: 'sleep 5; echo survived', computer_id: cid('task-split') } }, META);
      assertCreated(created.result, 'tools/call');
      const gone = new Promise((res) => edge.once('exit', res));
      edge.kill('SIGKILL');   // hosts kill fast: no cleanup at exit
      await gone;
      await up();
      const done = await tasksApi((m, p, meta) => post(port2, m, p, meta)).until(created.result.taskId, 'completed');
      assert.equal(done.result.structuredContent.stdout, 'survived\n', JSON.stringify(done));
    } finally {
      edge?.kill('SIGTERM');
      if (split.exitCode === null && split.signalCode === null) {
        const exited = new Promise((res) => split.on('exit', res));
        split.kill('SIGTERM');
        await Promise.race([exited, sleep(15000, null, { ref: false })]);
      }
      await waitFor(async () => (await containerOf(cid('task-split'))) === null, { timeoutMs: 15000, intervalMs: 500 });
    }
  });
});
