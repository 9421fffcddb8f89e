// MCP 2026-07-28 beside 2025: the official TypeScript SDK v2 client (@modelcontextprotocol/client,
// version negotiation 'auto') over stdio and Streamable HTTP negotiates 2026-07-28 and runs the
// reference's acceptance cases with sandbox handles; the v1 client (@modelcontextprotocol/sdk)
// still gets 2025-11-25. Raw HTTP checks the wire rules the SDK does not show (statuses, headers,
// no Mcp-Session-Id). Every container made here carries the label msc.era-test=<run> and is
// removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MSC_BIN, docker, waitFor, waitExit, sleep, RANDOM_SLUG_RE, freePort } from './lib.mjs';

const RUN = `era${randomBytes(3).toString('hex')}`;
const LABEL = `--docker-run-flag=--label=msc.era-test=${RUN}`;
const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const HANDLE_UNKNOWN = 'Unknown or expired sandbox_handle';

const procs = new Set();
const clients = new Set();
// Sanitizer reports (ASan/UBSan builds) on any server's stderr fail the file.
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); };
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary containers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  await sleep(500);
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.era-test=${RUN}`])).stdout.trim();
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
  proc.stderr.on('data', (c) => { err = (err + c).slice(-20000); });
  watch(proc.stderr);
  const url = `http://127.0.0.1:${port}/mcp`;
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, `server not ready: ${err}`);
  return { url, proc, stderr: () => err };
}

async function v2Http(url) {
  const c = new ClientV2({ name: 'era-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}

/** A raw modern POST: headers mirror the body unless overridden. */
async function post(url, method, params = {}, { headers = {}, id = 1, meta = META } = {}) {
  const body = { jsonrpc: '2.0', id, method, params: meta ? { ...params, _meta: meta } : params };
  const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN, 'Mcp-Method': method, ...headers };
  if (params.name && !('Mcp-Name' in headers)) h['Mcp-Name'] = params.name;
  if (params.uri && !('Mcp-Name' in headers)) h['Mcp-Name'] = params.uri;
  for (const k of Object.keys(h)) if (h[k] === undefined) delete h[k];
  const r = await fetch(url, { method: 'POST', headers: h, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, json: text.startsWith('{') ? JSON.parse(text) : null };
}

const sc = (res) => res.structuredContent;
const exec = async (c, args) => {
  const res = await c.callTool({ name: 'terminal_execute', arguments: args });
  assert.equal(res.isError, false, JSON.stringify(res));
  return sc(res);
};

test('v2 client over HTTP negotiates 2026-07-28; a handle addresses one computer, none mints a new one', async () => {
  const srv = await startHttp();
  const c = await v2Http(srv.url);
  assert.equal(c.getNegotiatedProtocolVersion(), MODERN);
  const tools = await c.listTools();
  assert.equal(tools.tools[0].name, 'terminal_execute');
  assert.ok(tools.tools[0].inputSchema.properties.sandbox_handle, 'sandbox_handle in the schema');
  const a = await exec(c, { command: 'echo one > /f; echo hi' });
  assert.equal(a.stdout, 'hi\n');
  assert.match(a.computer_id, RANDOM_SLUG_RE);
  assert.ok(typeof a.sandbox_handle === 'string' && a.sandbox_handle.length >= 32, JSON.stringify(a));
  const again = await exec(c, { command: 'cat /f', sandbox_handle: a.sandbox_handle });
  assert.equal(again.stdout, 'one\n');
  assert.equal(again.computer_id, a.computer_id);
  assert.equal(again.sandbox_handle, a.sandbox_handle);
  const other = await exec(c, { command: 'cat /f 2>/dev/null || echo none' });
  assert.notEqual(other.computer_id, a.computer_id);
  assert.notEqual(other.sandbox_handle, a.sandbox_handle);
  assert.equal(other.stdout, 'none\n');
  // forged, too long, wrong type
  for (const bad of ['0'.repeat(40), 'x'.repeat(129)]) {
    const res = await c.callTool({ name: 'terminal_execute', arguments: { command: 'true', sandbox_handle: bad } });
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, new RegExp(HANDLE_UNKNOWN));
  }
  const res = await c.callTool({ name: 'terminal_execute', arguments: { command: 'true', sandbox_handle: 7 } });
  assert.equal(res.isError, true);
  // the reference's validation is an isError result, and mints no handle
  const empty = await c.callTool({ name: 'terminal_execute', arguments: {} });
  assert.equal(empty.isError, true);
  assert.match(empty.content[0].text, /Must provide either 'command' or 'args'/);
});

test('v2 client over stdio negotiates 2026-07-28 and keeps one default handle per process', async () => {
  const t = new StdioV2({ command: MSC_BIN, args: [LABEL], stderr: 'pipe' });
  watch(t.stderr);
  const c = new ClientV2({ name: 'era-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(t);
  assert.equal(c.getNegotiatedProtocolVersion(), MODERN);
  const a = await exec(c, { command: 'echo x > /g; echo ok' });
  assert.equal(a.stdout, 'ok\n');
  const b = await exec(c, { command: 'cat /g' });
  assert.equal(b.computer_id, a.computer_id, 'no handle: the process default');
  assert.equal(b.stdout, 'x\n');
  assert.equal(b.sandbox_handle, a.sandbox_handle);
  const withHandle = await exec(c, { command: 'cat /g', sandbox_handle: a.sandbox_handle });
  assert.equal(withHandle.computer_id, a.computer_id);
  const r = await c.readResource({ uri: 'ui://nothing' }).catch((e) => e);
  assert.ok(r instanceof Error);
  await c.close();
});

test('v1 client still gets 2025-11-25 over stdio and HTTP, with sessions', async () => {
  const t = new StdioV1({ command: MSC_BIN, args: [LABEL], stderr: 'pipe' });
  watch(t.stderr);
  const c = new ClientV1({ name: 'era-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  const a = (await c.callTool({ name: 'terminal_execute', arguments: { command: 'echo v1' } })).structuredContent;
  assert.equal(a.stdout, 'v1\n');
  assert.equal(a.sandbox_handle, undefined, 'the 2025 session is its own handle');
  await c.close();
  const srv = await startHttp();
  const ht = new HttpV1(new URL(srv.url));
  const h = new ClientV1({ name: 'era-test', version: '1' }, { capabilities: {} });
  clients.add(h);
  await h.connect(ht);
  assert.ok(ht.sessionId, 'Mcp-Session-Id');
  assert.equal(ht.protocolVersion, '2025-11-25');
  const r = (await h.callTool({ name: 'terminal_execute', arguments: { command: 'echo v1h' } })).structuredContent;
  assert.equal(r.stdout, 'v1h\n');
  await h.close();
});

test('raw 2026-07-28 wire: statuses, error shapes, headers, no session id', async () => {
  const srv = await startHttp();
  const d = await post(srv.url, 'server/discover');
  assert.equal(d.status, 200);
  assert.deepEqual(d.json.result.supportedVersions, [MODERN]);
  assert.equal(d.json.result.resultType, 'complete');
  assert.equal(d.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'Kilntainers');
  // Exactly DiscoverResult's keys (issue 27: instructions were missing and a stray
  // "text/html;profile=mcp-app" key stood in their place).
  assert.deepEqual(Object.keys(d.json.result).sort(),
    ['_meta', 'cacheScope', 'capabilities', 'instructions', 'resultType', 'supportedVersions', 'ttlMs']);
  assert.match(d.json.result.instructions, /terminal_execute/);
  assert.match(d.json.result.instructions, /sandbox_handle/);
  assert.deepEqual(d.json.result.capabilities.extensions, {
    'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] }, 'io.modelcontextprotocol/tasks': {} });
  assert.equal(d.headers.get('mcp-session-id'), null);
  // missing envelope -> 400 -32602; version -> 400 -32022 with data; mismatch -> 400 -32020
  const noMeta = await post(srv.url, 'tools/list', {}, { meta: null });
  assert.equal(noMeta.status, 400);
  assert.equal(noMeta.json.error.code, -32602);
  const v = await post(srv.url, 'server/discover', {}, { headers: { 'MCP-Protocol-Version': '1900-01-01' },
    meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' }, id: 'v' });
  assert.equal(v.status, 400);
  assert.equal(v.json.id, 'v');
  assert.deepEqual(v.json.error.data, { supported: [MODERN], requested: '1900-01-01' });
  const mm = await post(srv.url, 'tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } });
  assert.equal(mm.status, 400);
  assert.equal(mm.json.error.code, -32020);
  const nameMissing = await post(srv.url, 'tools/call', { name: 'terminal_execute', arguments: {} }, { headers: { 'Mcp-Name': undefined } });
  assert.equal(nameMissing.status, 400);
  assert.equal(nameMissing.json.error.code, -32020);
  const b64 = await post(srv.url, 'tools/call', { name: 'terminal_execute', arguments: {} },
    { headers: { 'Mcp-Name': `=?base64?${Buffer.from('terminal_execute').toString('base64')}?=` } });
  assert.equal(b64.status, 200);
  assert.equal(b64.json.result.isError, true);
  // 2025 methods are gone in this revision
  for (const m of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe']) {
    const r = await post(srv.url, m, {});
    assert.equal(r.status, 404, m);
    assert.equal(r.json.error.code, -32601, m);
  }
  const rr = await post(srv.url, 'resources/read', { uri: 'ui://nope' });
  assert.equal(rr.status, 200);
  assert.equal(rr.json.error.code, -32602);
  assert.deepEqual(rr.json.error.data, { uri: 'ui://nope' });
  const tl = await post(srv.url, 'tools/list', {});
  assert.equal(tl.json.result.cacheScope, 'public');
  assert.ok(Number.isInteger(tl.json.result.ttlMs));
  const tl2 = await post(srv.url, 'tools/list', {});
  assert.deepEqual(tl2.json.result.tools.map((t) => t.name), tl.json.result.tools.map((t) => t.name));
  const ls = await post(srv.url, 'subscriptions/listen', { notifications: { toolsListChanged: true } }, { id: 9 });
  assert.equal(ls.status, 200);
  assert.match(ls.headers.get('content-type'), /text\/event-stream/);
  const events = ls.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  assert.equal(events[0].method, 'notifications/subscriptions/acknowledged');
  assert.equal(events[0].params._meta['io.modelcontextprotocol/subscriptionId'], 9);
  assert.equal(events.at(-1).id, 9);
  const del = await fetch(srv.url, { method: 'DELETE', headers: { 'MCP-Protocol-Version': MODERN } });
  assert.equal(del.status, 405);
  // a 2025 session is unchanged beside it: initialize mints Mcp-Session-Id
  const init = await fetch(srv.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
  assert.equal(init.status, 200);
  assert.ok(init.headers.get('mcp-session-id'));
  assert.equal((await init.json()).result.protocolVersion, '2025-11-25', 'initialize negotiates among 2025 versions only');
});

test('stdio: a request without _meta before initialize is still served the 2025 way; a modern one any time', async () => {
  const p = spawn(MSC_BIN, [LABEL], { stdio: ['pipe', 'pipe', 'pipe'] });
  procs.add(p);
  watch(p.stderr);
  const lines = [];
  let buf = '';
  p.stdout.on('data', (c) => { buf += c; let i; while ((i = buf.indexOf('\n')) >= 0) { lines.push(JSON.parse(buf.slice(0, i))); buf = buf.slice(i + 1); } });
  const send = (m) => p.stdin.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999' } } });
  send({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: META } });
  send({ jsonrpc: '2.0', id: 3, method: 'server/discover', params: {} });
  send({ jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  send({ jsonrpc: '2.0', id: 5, method: 'prompts/list', params: { _meta: META } });
  await waitFor(() => lines.length >= 5, { timeoutMs: 10000, intervalMs: 50 });
  const by = Object.fromEntries(lines.map((l) => [l.id, l]));
  assert.equal(by[1].error.code, -32022);
  assert.equal(by[2].error.code, -32601);
  assert.equal(by[3].error.code, -32602);
  assert.equal(by[4].result.protocolVersion, '2025-11-25');
  assert.equal(by[4].result.resultType, undefined);
  assert.equal(by[5].result.resultType, 'complete');
  assert.ok(Number.isInteger(by[5].result.ttlMs));
  p.stdin.end();
  await waitExit(p, 10000);
  await sleep(10);
});

async function v1Http(url) {
  const c = new ClientV1({ name: 'era-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}

test('attack: another session names a temporary computer by id (2025 sessions and 2026 handles)', async () => {
  const srv = await startHttp([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
  const victim = await v1Http(srv.url);
  const thief = await v1Http(srv.url);
  const id = `${RUN}-victim`;
  const v = (await victim.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command: 'echo secret > /s' } })).structuredContent;
  assert.equal(v.computer_id, id);
  // by id: refused, in every tool
  const ex = await thief.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command: 'cat /s' } });
  assert.equal(ex.isError, true, JSON.stringify(ex));
  assert.match(ex.content[0].text, /Temporary computer already has an active sandbox_handle/);
  assert.doesNotMatch(JSON.stringify(ex), /secret/);
  const cr = await thief.callTool({ name: 'computer_create', arguments: { computer_id: id } });
  assert.equal(cr.isError, true);
  for (const name of ['computer_delete', 'computer_factory_reset', 'computer_restart']) {
    const r = await thief.callTool({ name, arguments: { computer_id: id } });
    assert.equal(r.isError, true, name);
    assert.match(r.content[0].text, /Computer is not owned by this sandbox handle/, name);
  }
  // and it does not see it
  const list = (await thief.callTool({ name: 'computer_list', arguments: {} })).structuredContent;
  assert.ok(!list.computers.some((c) => c.computer_id === id), JSON.stringify(list));
  const own = (await victim.callTool({ name: 'computer_list', arguments: {} })).structuredContent;
  assert.ok(own.computers.some((c) => c.computer_id === id), 'the owner sees it');
  // a 2026 client: with no handle, with a made-up handle, with its own handle and the victim's id
  const modern = await v2Http(srv.url);
  const m1 = await modern.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command: 'cat /s' } });
  assert.equal(m1.isError, true);
  assert.match(m1.content[0].text, /Temporary computer already has an active sandbox_handle/);
  const m2 = await modern.callTool({ name: 'terminal_execute', arguments: { sandbox_handle: 'a'.repeat(43), command: 'cat /s' } });
  assert.match(m2.content[0].text, /Unknown or expired sandbox_handle/);
  const mine = await exec(modern, { command: 'true' });
  const m3 = await modern.callTool({ name: 'terminal_execute', arguments: { sandbox_handle: mine.sandbox_handle, computer_id: id, command: 'cat /s' } });
  assert.equal(m3.isError, true);
  assert.match(m3.content[0].text, /computer_id does not match sandbox_handle/);
  // the victim's computer is untouched
  const still = (await victim.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command: 'cat /s' } })).structuredContent;
  assert.equal(still.stdout, 'secret\n');
});

test('computer_release ends a handle and removes its container; idle handles expire; --max-sandboxes caps them', async () => {
  const srv = await startHttp(['--session-timeout', '2', '--max-sandboxes', '2']);
  const c = await v2Http(srv.url);
  const a = await exec(c, { command: 'true' });
  const ctr = `kilntainer-${a.computer_id}`;
  assert.equal((await docker(['ps', '-q', '--filter', `name=^${ctr}$`])).stdout.trim() !== '', true);
  const rel = await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: a.sandbox_handle } });
  assert.equal(rel.isError, false, JSON.stringify(rel));
  assert.equal(rel.structuredContent.released, true);
  assert.equal(rel.structuredContent.cleanup_complete, true);
  assert.equal((await docker(['ps', '-aq', '--filter', `name=^${ctr}$`])).stdout.trim(), '', 'container removed');
  const after = await c.callTool({ name: 'terminal_execute', arguments: { sandbox_handle: a.sandbox_handle, command: 'true' } });
  assert.match(after.content[0].text, /Unknown or expired sandbox_handle/);
  const again = await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: a.sandbox_handle } });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /Unknown or expired sandbox_handle/);
  // the cap: two live handles, the third is refused with the reference's text
  const h1 = await exec(c, { command: 'true' });
  const h2 = await exec(c, { command: 'true' });
  const h3 = await c.callTool({ name: 'terminal_execute', arguments: { command: 'true' } });
  assert.equal(h3.isError, true);
  assert.match(h3.content[0].text, /Sandbox limit reached; release an existing handle/);
  // idle past --session-timeout: refused and its computer gone
  await sleep(4000);
  for (const h of [h1, h2]) {
    const r = await c.callTool({ name: 'terminal_execute', arguments: { sandbox_handle: h.sandbox_handle, command: 'true' } });
    assert.match(r.content[0].text, /Unknown or expired sandbox_handle/);
    assert.ok(await waitFor(async () => (await docker(['ps', '-aq', '--filter', `name=^kilntainer-${h.computer_id}$`])).stdout.trim() === '',
      { timeoutMs: 15000, intervalMs: 250 }), 'expired handle\'s container removed');
  }
  await exec(c, { command: 'true' }); // room again
});

test('2026 over HTTP: computer_create without a handle mints one; lifecycle tools act for it', async () => {
  const srv = await startHttp([], { ENABLE_LIFECYCLE_TOOLS: 'true' });
  const c = await v2Http(srv.url);
  const id = `${RUN}-made`;
  const cr = await c.callTool({ name: 'computer_create', arguments: { computer_id: id } });
  assert.equal(cr.isError, false, JSON.stringify(cr));
  const handle = cr.structuredContent.sandbox_handle;
  assert.ok(typeof handle === 'string' && handle.length >= 32, JSON.stringify(cr.structuredContent));
  const run = await exec(c, { sandbox_handle: handle, computer_id: id, command: 'echo made' });
  assert.equal(run.stdout, 'made\n');
  const list = await c.callTool({ name: 'computer_list', arguments: { sandbox_handle: handle } });
  assert.ok(list.structuredContent.computers.some((x) => x.computer_id === id));
  assert.doesNotMatch(JSON.stringify(list), new RegExp(handle), 'handles never listed');
  const noHandle = await c.callTool({ name: 'computer_list', arguments: {} });
  assert.equal(noHandle.isError, true);
  const rel = await c.callTool({ name: 'computer_release', arguments: { sandbox_handle: handle } });
  assert.equal(rel.structuredContent.released, true);
  assert.ok(await waitFor(async () => (await docker(['ps', '-aq', '--filter', `name=^kilntainer-${id}$`])).stdout.trim() === '',
    { timeoutMs: 15000, intervalMs: 250 }), 'released: its temporary computer removed');
});
