// Preview URLs (issue 30), what the browser test (tests/browser/preview.test.mjs) does not drive:
// ownership (another agent's temporary computer refused, 2025 sessions and 2026 handles),
// computer_list's exposed_ports, a computer deleted while a WebSocket through its URL is open
// (closed, the URL gone), a permanent computer's URL across the server's restart (the same
// --preview-listen port and state folder), and the other backends' clear refusal (go_busybox, wasm,
// fly; in the split layout, from the driver itself, as its edge knows no backend).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MSC_BIN, docker, startServer, waitFor, waitExit, sleep, withPoolFlag, freePort } from './lib.mjs';
import { call } from './tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RUN = `ports${randomBytes(3).toString('hex')}`;
const SERVER = readFileSync(path.join(HERE, '..', 'browser', 'preview_server.pl'), 'utf8');
const STATE = mkdtempSync(path.join(os.tmpdir(), 'msc-ports-test-'));
const FLAGS = withPoolFlag([`--docker-run-flag=--label=msc.ports-test=${RUN}`, '--tools', 'ports']);
const ENV = { ...process.env, MSC_PROXY_DIR: STATE, ENABLE_LIFECYCLE_TOOLS: 'true' };
const procs = new Set();
const clients = new Set();
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); };

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  await sleep(300);
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.ports-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
  rmSync(STATE, { recursive: true, force: true });
});

// The driver's table: one file per computer in MSC_PROXY_DIR/preview-<driver id>/.
const previewDir = () => path.join(STATE, readdirSync(STATE).find((f) => f.startsWith('preview-')) ?? 'none');
async function startHttp(previewPort) {
  const port = await freePort();
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...FLAGS,
    '--preview-listen', `127.0.0.1:${previewPort}`], { stdio: ['ignore', 'ignore', 'pipe'], env: ENV });
  procs.add(proc);
  watch(proc.stderr);
  assert.ok(await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 }), 'server not ready');
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}
async function v1Http(url) {
  const c = new ClientV1({ name: 'ports-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}
async function v2Http(url) {
  const c = new ClientV2({ name: 'ports-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}
async function ok(c, name, args) {
  const res = await call(c, name, args);
  assert.equal(res.isError, false, `${name}: ${JSON.stringify(res).slice(0, 1500)}`);
  return JSON.parse(res.content[0].text);
}
async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args)}: ${JSON.stringify(res).slice(0, 500)}`);
  assert.match(res.content[0].text, re);
  assert.doesNotMatch(res.content[0].text, /http:\/\//);
}
async function startPerl(c, args, port) {
  const cmd = `cat > /tmp/s.pl <<'PERL_EOF'\n${SERVER}\nPERL_EOF\n(setsid perl /tmp/s.pl ${port} x >/dev/null 2>&1 &) ; sleep 0.3; echo started`;
  const r = await ok(c, 'terminal_execute', { command: cmd, ...args });
  assert.match(r.stdout, /started/);
  return r;
}
/** One GET with the preview URL's Host, on its own connection: the whole answer ('' when refused). */
function get(url, pathname = '/') {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), '127.0.0.1');
    let data = '';
    s.on('connect', () => s.write(`GET ${pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`));
    s.on('data', (d) => { data += d; });
    s.on('error', () => resolve(data));
    s.on('close', () => resolve(data));
    setTimeout(() => { s.destroy(); resolve(data); }, 5000);
  });
}
/** A WebSocket through the URL, its handshake done: {socket, closed: Promise}. */
function openWs(url) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), '127.0.0.1');
    let head = '';
    const closed = new Promise((r) => s.on('close', r));
    s.on('error', () => {});
    s.on('connect', () => s.write(`GET /ws HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`));
    s.on('data', function first(d) {
      head += d;
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', first);
      if (!/^HTTP\/1\.1 101/.test(head)) reject(new Error(head));
      else resolve({ socket: s, closed });
    });
  });
}

test('ownership, computer_list, deletion under an open WebSocket, a permanent URL across the server\'s restart', { timeout: 240000 }, async () => {
  const previewPort = await freePort();
  let srv = await startHttp(previewPort);
  const victim = await v1Http(srv.url);
  const thief = await v1Http(srv.url);
  const tmp = `${RUN}-tmp`, perm = `${RUN}-perm`;

  // The victim's temporary computer, serving on 8000, exposed.
  await startPerl(victim, { computer_id: tmp }, 8000);
  const et = await ok(victim, 'computer_expose_port', { computer_id: tmp, port: 8000 });
  assert.match(et.url, new RegExp(`^http://[0-9a-f]{32}\\.localhost:${previewPort}/$`));
  assert.match(await get(et.url), /^HTTP\/1\.1 200[\s\S]*hello from x port 8000/);

  // Another agent: neither exposes nor revokes it (2025 session; 2026 handles).
  await refused(thief, 'computer_expose_port', { computer_id: tmp, port: 8000 }, /Computer is not owned by this sandbox handle/);
  await refused(thief, 'computer_unexpose_port', { computer_id: tmp, port: 8000 }, /Computer is not owned by this sandbox handle/);
  const modern = await v2Http(srv.url);
  await refused(modern, 'computer_expose_port', { sandbox_handle: 'a'.repeat(43), computer_id: tmp, port: 8000 }, /Unknown or expired sandbox_handle/);
  const mine = await ok(modern, 'terminal_execute', { command: 'true' });
  assert.ok(mine.sandbox_handle);
  await refused(modern, 'computer_expose_port', { sandbox_handle: mine.sandbox_handle, computer_id: tmp, port: 8000 }, /Computer is not owned by this sandbox handle/);
  await refused(modern, 'computer_unexpose_port', { sandbox_handle: mine.sandbox_handle, computer_id: tmp, port: 8000 }, /Computer is not owned by this sandbox handle/);
  // The modern agent's own computer: its URL, through its handle.
  const em = await ok(modern, 'computer_expose_port', { sandbox_handle: mine.sandbox_handle, computer_id: mine.computer_id, port: 8000 });
  assert.match(em.url, /^http:\/\/[0-9a-f]{32}\.localhost:/);
  assert.notEqual(em.url, et.url);
  // A 2025 agent cannot reach the modern agent's computer either.
  await refused(victim, 'computer_expose_port', { computer_id: mine.computer_id, port: 8000 }, /not owned by this sandbox handle/);
  assert.match(await get(et.url), /^HTTP\/1\.1 200/, 'the victim\'s URL is untouched');

  // computer_list shows the exposed ports.
  const list = await ok(victim, 'computer_list', {});
  assert.deepEqual(list.computers.find((c) => c.computer_id === tmp)?.exposed_ports, [8000], JSON.stringify(list));

  // A WebSocket through the URL, then the computer deleted: the tunnel ends, the URL is gone.
  assert.deepEqual(readdirSync(previewDir()).filter((f) => f.startsWith(RUN)), [tmp]);
  const ws = await openWs(et.url);
  const t0 = Date.now();
  await ok(victim, 'computer_delete', { computer_id: tmp });
  await Promise.race([ws.closed, sleep(10000).then(() => { throw new Error('the WebSocket stayed open'); })]);
  assert.ok(Date.now() - t0 < 10000);
  assert.match(await get(et.url), /^HTTP\/1\.1 404[\s\S]*No such preview/);
  assert.deepEqual(readdirSync(previewDir()).filter((f) => f.startsWith(RUN)), [], 'its file is gone');

  // A permanent computer's URL outlives the server.
  await ok(victim, 'computer_create', { computer_id: perm, temporary: false });
  await startPerl(victim, { computer_id: perm, temporary: false }, 8000);
  const ep = await ok(victim, 'computer_expose_port', { computer_id: perm, port: 8000 });
  assert.deepEqual(ep.exposed_ports, [8000]);
  assert.match(await get(ep.url, '/before'), /hello from x port 8000 path \/before/);
  assert.deepEqual(readdirSync(previewDir()).filter((f) => f.startsWith(RUN)), [perm]);
  // The capabilities' store is read by no one else.
  assert.equal(statSync(path.join(previewDir(), perm)).mode & 0o077, 0, 'the file is 0600');
  assert.equal(statSync(previewDir()).mode & 0o077, 0, 'the folder is 0700');
  for (const c of [victim, thief, modern]) { clients.delete(c); await c.close().catch(() => {}); }
  srv.proc.kill('SIGTERM');
  assert.ok(await waitExit(srv.proc, 15000) !== undefined);
  assert.equal(await get(ep.url), '', 'nothing serves while the server is down');
  // A file left by a computer deleted behind the server's back: dropped at start.
  const ghostCap = randomBytes(16).toString('hex');
  writeFileSync(path.join(previewDir(), `${RUN}-ghost`), `8000 ${ghostCap} ${'ab'.repeat(32)}\n`, { mode: 0o600 });
  srv = await startHttp(previewPort);
  assert.deepEqual(readdirSync(previewDir()).filter((f) => f.startsWith(RUN)), [perm], 'the ghost\'s file is gone');
  assert.match(await get(`http://${ghostCap}.localhost:${previewPort}/`), /^HTTP\/1\.1 404/);
  // No expose call: the listener is up from the kept table.
  assert.ok(await waitFor(async () => /path \/after/.test(await get(ep.url, '/after')), { timeoutMs: 10000, intervalMs: 200 }),
    'the URL answers after the server\'s restart');
  const again = await v1Http(srv.url);
  const ep2 = await ok(again, 'computer_expose_port', { computer_id: perm, port: 8000 });
  assert.equal(ep2.url, ep.url, 'the same URL');
  // A store others can write (another local user made it first, planted a capability): refused.
  clients.delete(again); await again.close().catch(() => {});
  srv.proc.kill('SIGTERM');
  assert.ok(await waitExit(srv.proc, 15000) !== undefined);
  const plantCap = randomBytes(16).toString('hex');
  const permId = (await docker(['inspect', '-f', '{{.Id}}', `kilntainer-${perm}`])).stdout.trim();
  writeFileSync(path.join(previewDir(), perm), `8000 ${plantCap} ${permId}\n`, { mode: 0o600 });
  chmodSync(previewDir(), 0o777);
  srv = await startHttp(previewPort);
  const last = await v1Http(srv.url);
  await ok(last, 'computer_expose_port', { computer_id: perm, port: 8001 });
  assert.doesNotMatch(await get(`http://${plantCap}.localhost:${previewPort}/`), /hello from/);
  chmodSync(previewDir(), 0o700);
  await ok(last, 'computer_delete', { computer_id: perm });
  assert.match(await get(ep.url), /^HTTP\/1\.1 404/);
});

test('the other backends and a computer without network refuse clearly; the default tool list has no ports tools', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'msc-ports-home-'));
  const tiny = path.join(process.env.MSC_BUILD_DIR ?? '', 'tests', 'wasm', 'host', 'tiny.wasm');
  const noNet = /Preview URLs are not served on the (go_busybox|wasm) backend: its computers have no network, so nothing in them listens on a port\. They are served on the docker \(Docker and Podman\), e2b and modal backends\./;
  const cases = [
    ['go_busybox', ['--tools', 'ports'], noNet],
    // Fly: refused before any call to the Machines API (none listens at that address).
    ['fly', ['--tools', 'ports', '--fly-api-url', 'http://127.0.0.1:9'], /Preview URLs are not served on the fly backend: a Fly Machine's ports are published only through its app's services/],
    ['docker', [], null],
    ['docker', ['--tools', 'ports', '--no-network'], null],
  ];
  if (process.env.MSC_BUILD_DIR && statSync(tiny, { throwIfNoEntry: false })) cases.push(['wasm', ['--tools', 'ports', '--wasm-path', tiny], noNet]);
  for (const [backend, flags, refusal] of cases) {
    const t = new StdioV1({ command: MSC_BIN, args: ['--backend', backend, ...withPoolFlag([...flags, `--docker-run-flag=--label=msc.ports-test=${RUN}`])], stderr: 'pipe',
      env: { ...ENV, HOME: home, FLY_API_TOKEN: 'fake-token', FLY_APP_NAME: 'msc-ports-test', KILNTAINERS_WASM_DIR: path.join(home, 'wasm') } });
    watch(t.stderr);
    const c = new ClientV1({ name: 'ports-test', version: '1' }, { capabilities: {} });
    clients.add(c);
    await c.connect(t);
    const names = (await c.listTools()).tools.map((x) => x.name);
    if (flags.includes('--no-network')) {
      const id = `${RUN}-nonet`;
      await ok(c, 'terminal_execute', { computer_id: id, command: 'true' });
      await refused(c, 'computer_expose_port', { computer_id: id, port: 8000 }, /Computer '.*-nonet' has no network \(--no-network\): its ports cannot be previewed/);
    } else if (refusal) {
      assert.ok(names.includes('computer_expose_port'), names.join());
      await refused(c, 'computer_expose_port', { computer_id: `${RUN}-w`, port: 8000 }, refusal);
      await refused(c, 'computer_unexpose_port', { computer_id: `${RUN}-w`, port: 8000 }, refusal);
    } else {
      assert.ok(!names.includes('computer_expose_port'), names.join());
      await refused(c, 'computer_expose_port', { computer_id: `${RUN}-w`, port: 8000 }, /Unknown tool: computer_expose_port/);
    }
    clients.delete(c);
    await c.close();
  }
  rmSync(home, { recursive: true, force: true });
});

test('split layout: the edge knows no backend, so the driver itself refuses with its reason (go_busybox)', async () => {
  const s = await startServer(['--backend', 'go_busybox', '--tools', 'ports'], { mode: 'split', env: ENV });
  try {
    const id = `${RUN}-split`;
    await s.exec({ computer_id: id, command: 'echo hi' });
    const res = await s.call({ computer_id: id, port: 8000 }, { name: 'computer_expose_port' });
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(res.content[0].text, /Preview URLs are not served on the go_busybox backend: its computers have no network/);
  } finally {
    await s.eof();
  }
});
