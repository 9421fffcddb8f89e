// Sandbox handles, continued (issue 15's leftovers), with the official SDK clients against a real
// Docker engine: a stateless 2026 computer_create that mints its handle keeps its network policy; a
// terminal_execute that mints its handle still reports progress; the dashboard names the handle's
// active computer; the server-wide bound on calls in flight; and an engine's error details never
// reach the client (they go to stderr). Every container made here carries the label
// msc.handles-test=<run> and is removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MSC_BIN, docker, waitFor, waitExit, sleep, freePort } from './lib.mjs';

const RUN = `hdl${randomBytes(3).toString('hex')}`;
const LABEL = `--docker-run-flag=--label=msc.handles-test=${RUN}`;
const procs = new Set();
const clients = new Set();
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const servers = [];

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  await sleep(500);
  const bad = servers.find((s) => SANITIZER_RE.test(s.stderr()));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.stderr().slice(-5000)}\n`); process.exitCode = 1; }
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.handles-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
});

async function startHttp(flags = [], extraEnv = {}) {
  const port = await freePort();
  const env = { ...process.env, ...extraEnv };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), LABEL, ...flags],
    { stdio: ['ignore', 'ignore', 'pipe'], env });
  procs.add(proc);
  let err = '';
  proc.stderr.on('data', (c) => { err = (err + c).slice(-400000); });
  const srv = { url: `http://127.0.0.1:${port}/mcp`, proc, stderr: () => err };
  servers.push(srv);
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, `server not ready: ${err}`);
  return srv;
}

async function v2Http(url) {
  const c = new ClientV2({ name: 'handles-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}

async function v1Http(url) {
  const c = new ClientV1({ name: 'handles-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}

const exec = async (c, args, opts) => {
  const res = await c.callTool({ name: 'terminal_execute', arguments: args }, opts);
  assert.equal(res.isError, false, JSON.stringify(res));
  return res.structuredContent;
};
const gone = (id) => waitFor(async () => (await docker(['ps', '-aq', '--filter', `name=^kilntainer-${id}$`])).stdout.trim() === '',
  { timeoutMs: 20000, intervalMs: 250 });

test('2026 stateless computer_create that mints its handle keeps its network policy', async () => {
  const srv = await startHttp([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
  const c = await v2Http(srv.url);
  const id = `${RUN}-none`;
  const cr = await c.callTool({ name: 'computer_create', arguments: { computer_id: id, network: { mode: 'none' } } });
  assert.equal(cr.isError, false, JSON.stringify(cr));
  const handle = cr.structuredContent.sandbox_handle;
  assert.ok(typeof handle === 'string' && handle.length >= 32, JSON.stringify(cr.structuredContent));
  const list = await c.callTool({ name: 'computer_list', arguments: { sandbox_handle: handle } });
  const row = list.structuredContent.computers.find((x) => x.computer_id === id);
  assert.equal(row?.network, 'none', JSON.stringify(list.structuredContent));
  // The container itself carries the policy its driver enforces (before the fix: open).
  const label = await docker(['inspect', '-f', '{{index .Config.Labels "kilntainers.network"}}', `kilntainer-${id}`]);
  assert.equal(label.stdout.trim(), 'none');
  const r = await exec(c, { sandbox_handle: handle, command: 'echo in' });
  assert.equal(r.computer_id, id);
  await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: handle } });
  assert.ok(await gone(id), 'released: its computer removed');
});

test('2026 stateless terminal_execute without a handle reports progress, and returns its new handle', async () => {
  const srv = await startHttp();
  const c = await v2Http(srv.url);
  const got = [];
  const res = await exec(c, { command: 'for i in 1 2 3 4; do echo "tick $i"; sleep 1; done' },
    { timeout: 120000, onprogress: (p) => got.push(p) });
  assert.equal(res.stdout, 'tick 1\ntick 2\ntick 3\ntick 4\n');
  assert.ok(got.length >= 2, `progress: ${JSON.stringify(got)}`);
  assert.ok(got.some((p) => /tick [1-3]/.test(p.message ?? '')), JSON.stringify(got));
  assert.ok(typeof res.sandbox_handle === 'string' && res.sandbox_handle.length >= 32);
  // The handle minted for it is a live one that addresses the same computer.
  const again = await exec(c, { sandbox_handle: res.sandbox_handle, command: 'echo $((1+1))' });
  assert.equal(again.computer_id, res.computer_id);
  // A progress call whose arguments are refused mints nothing that lingers.
  const bad = await c.callTool({ name: 'terminal_execute', arguments: { command: 'true', timeout: 0 } },
    { onprogress: () => {} });
  assert.equal(bad.isError, true);
  assert.deepEqual(bad.structuredContent, { error: 'timeout must be at least 1 second.' });
  await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: res.sandbox_handle } });
  assert.ok(await gone(res.computer_id));
});

test('the dashboard names the active computer: of a 2026 handle, of a 2025 session (null before one)', async () => {
  const srv = await startHttp([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
  const m = await v2Http(srv.url);
  const a = await exec(m, { command: 'true' });
  const d = await m.callTool({ name: 'computer_dashboard', arguments: { sandbox_handle: a.sandbox_handle } });
  assert.equal(d.isError, false, JSON.stringify(d));
  assert.equal(d.structuredContent.active_computer_id, a.computer_id);
  assert.doesNotMatch(JSON.stringify(d), new RegExp(a.sandbox_handle), 'handles never shown');
  const old = await v1Http(srv.url);
  const before = await old.callTool({ name: 'computer_dashboard', arguments: {} });
  assert.equal(before.structuredContent.active_computer_id, null);
  const b = (await old.callTool({ name: 'terminal_execute', arguments: { command: 'true' } })).structuredContent;
  const now = await old.callTool({ name: 'computer_dashboard', arguments: {} });
  assert.equal(now.structuredContent.active_computer_id, b.computer_id);
  // computer_list keeps the reference's shape.
  const list = await old.callTool({ name: 'computer_list', arguments: {} });
  assert.equal('active_computer_id' in list.structuredContent, false);
  await m.callTool({ name: 'computer_release', arguments: { sandbox_handle: a.sandbox_handle } });
  await old.transport.terminateSession();
  assert.ok(await gone(a.computer_id));
  assert.ok(await gone(b.computer_id));
});

test('--max-pending-calls: the server refuses calls past its bound, for every handle, and takes them again', async () => {
  const srv = await startHttp(['--max-pending-calls', '2']);
  const c = await v2Http(srv.url);
  const h1 = await exec(c, { command: 'true' });
  const h2 = await exec(c, { command: 'true' });
  const slow = [h1, h2].map((h) => exec(c, { sandbox_handle: h.sandbox_handle, command: 'sleep 4; echo done' }, { timeout: 60000 }));
  await sleep(1500);
  for (const args of [{ sandbox_handle: h1.sandbox_handle, command: 'true' }, { command: 'true' }]) {
    const r = await c.callTool({ name: 'terminal_execute', arguments: args });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.deepEqual(r.structuredContent, { error: 'Server request queue is full; retry in a few seconds.' });
  }
  for (const r of await Promise.all(slow)) assert.equal(r.stdout, 'done\n');
  assert.equal((await exec(c, { sandbox_handle: h1.sandbox_handle, command: 'echo ok' })).stdout, 'ok\n');
  for (const h of [h1, h2]) await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: h.sandbox_handle } });
});

test('an engine failure reaches the client as a generic text, its details only on stderr (both eras)', async () => {
  // An image that does not exist locally: the engine's answer names it and the registry it tried.
  const image = `msc-no-such-image-${RUN}:v1`;
  const srv = await startHttp(['--image', image, '--warm-pool', '0', '--tool-instruction-override', 'x']);
  for (const c of [await v2Http(srv.url), await v1Http(srv.url)]) {
    const params = { name: 'terminal_execute', arguments: { command: 'true' } };
    const r = c instanceof ClientV1 ? await c.callTool(params, undefined, { timeout: 120000 })
      : await c.callTool(params, { timeout: 120000 });
    assert.equal(r.isError, true, JSON.stringify(r));
    const text = r.content[0].text;
    assert.match(text, /^(\{"error": ")?Sandbox could not be created or attached("\})?$/, text);
    assert.doesNotMatch(JSON.stringify(r), new RegExp(`${RUN}|image|registry|pull`, 'i'));
  }
  assert.ok(await waitFor(() => srv.stderr().includes(image), { timeoutMs: 5000, intervalMs: 100 }),
    `the details are logged: ${srv.stderr().slice(-2000)}`);
});
