// Snapshots, rollback and forks (issue 31, --tools snapshots) on go_busybox, through the official
// SDK: a snapshot is a copy of the computer's folder tree in <state>/go_busybox/.snapshots/<id>/
// with its meta.json (wasm_snapshot.c). Write, snapshot, change, restore; forks; a restarted server
// finds them again; the quota and the refusals; another principal's snapshot in both eras; symlinks
// planted toward the host stay symlinks; a delete racing a restore never loses the computer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, MSC_BIN, waitFor, waitExit } from './lib.mjs';

const SNAP_RE = /^snap-[0-9a-f]{32}$/;
let state;
let outside;
const procs = new Set();
const clients = new Set();
const TOKENS = { alice: randomBytes(16).toString('hex'), bob: randomBytes(16).toString('hex') };
let tokensFile;
before(() => {
  state = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-snap-'));
  outside = path.join(state, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret\n');
  tokensFile = path.join(state, 'tokens');
  fs.writeFileSync(tokensFile, Object.entries(TOKENS).map(([n, t]) => `${n} ${t}`).join('\n') + '\n', { mode: 0o600 });
});
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  fs.rmSync(state, { recursive: true, force: true });
});

const env = () => ({ KILNTAINERS_WASM_DIR: state, HOME: state });
const TOOLS = ['--backend', 'go_busybox', '--tools', 'lifecycle,snapshots,files'];
const busybox = (flags = []) => startServer([...TOOLS, ...flags], { env: env() });
const snapDir = (id) => path.join(state, 'go_busybox', '.snapshots', id);

const call = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
async function ok(c, name, args) {
  const res = await call(c, name, args);
  assert.equal(res.isError, false, `${name}: ${JSON.stringify(res).slice(0, 2000)}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, 'text and structuredContent agree');
  return res.structuredContent;
}
async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)} should fail: ${JSON.stringify(res).slice(0, 500)}`);
  const text = res.content.map((b) => b.text).join('\n');
  assert.match(text, re, `${name}: ${text}`);
  return text;
}
const sh = async (c, command, extra = {}) => (await ok(c, 'terminal_execute', { command, ...extra })).stdout;

test('go_busybox: write, snapshot, change, restore, read the old content; forks keep their own changes; found after a restart', async () => {
  let s = await busybox();
  let c = s.client;
  const id = (await ok(c, 'computer_create', { temporary: true })).computer_id;
  await sh(c, 'mkdir -p /work && echo one > /work/state.txt', { computer_id: id });
  await ok(c, 'file_write', { computer_id: id, path: '/work/run.sh', content: '#!/bin/sh\n', mode: '0750' });
  // A command running meanwhile goes on.
  const running = sh(c, 'sleep 2; echo still-ran', { computer_id: id });
  await new Promise((r) => setTimeout(r, 300));
  const snap = await ok(c, 'computer_snapshot', { computer_id: id, name: 'first state' });
  assert.match(snap.snapshot_id, SNAP_RE);
  assert.deepEqual([snap.name, snap.computer_id], ['first state', id]);
  assert.ok(snap.size_bytes > 0, JSON.stringify(snap));
  assert.equal(await running, 'still-ran\n');
  assert.equal(fs.readFileSync(path.join(snapDir(snap.snapshot_id), 'root', 'work', 'state.txt'), 'utf8'), 'one\n');
  assert.equal(fs.statSync(path.join(snapDir(snap.snapshot_id), 'root', 'work', 'run.sh')).mode & 0o777, 0o750, 'modes kept');
  const row = (await ok(c, 'snapshot_list', {})).snapshots.find((x) => x.snapshot_id === snap.snapshot_id);
  assert.ok(row);
  assert.match(row.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  await sh(c, 'echo two > /work/state.txt; touch /work/later', { computer_id: id });
  const back = await ok(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
  assert.deepEqual([back.computer_id, back.temporary], [id, true]);
  assert.equal(await sh(c, 'cat /work/state.txt; test -e /work/later || echo gone', { computer_id: id }), 'one\ngone\n');

  // Ten forks at once: each its own id, each sees the snapshot's file, their changes stay theirs.
  const t0 = Date.now();
  const forks = await ok(c, 'computer_create', { from_snapshot: snap.snapshot_id, count: 10 });
  const forkMs = Date.now() - t0;
  assert.equal(forks.count, 10);
  const ids = forks.computers.map((f) => f.computer_id);
  assert.equal(new Set(ids).size, 10);
  for (const f of ids) {
    assert.equal(await sh(c, 'cat /work/state.txt', { computer_id: f }), 'one\n');
    await sh(c, `echo mine-${f} > /work/state.txt`, { computer_id: f });
  }
  for (const f of ids) assert.equal(await sh(c, 'cat /work/state.txt', { computer_id: f }), `mine-${f}\n`);
  assert.equal(await sh(c, 'cat /work/state.txt', { computer_id: id }), 'one\n');
  process.stderr.write(`go_busybox: 10 forks in ${forkMs} ms (one call, through the SDK)\n`);
  // A permanent fork and the snapshot outlive the server.
  const perm = await ok(c, 'computer_create', { from_snapshot: snap.snapshot_id, temporary: false });
  await s.close();

  s = await busybox();
  c = s.client;
  const again = (await ok(c, 'snapshot_list', {})).snapshots.find((x) => x.snapshot_id === snap.snapshot_id);
  assert.ok(again, 'found again after the restart');
  assert.equal(again.name, 'first state');
  assert.equal(await sh(c, 'cat /work/state.txt', { computer_id: perm.computer_id, temporary: false }), 'one\n');
  // Forks are copies: the snapshot goes while they live.
  await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  assert.ok(!fs.existsSync(snapDir(snap.snapshot_id)));
  await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  assert.equal(await sh(c, 'cat /work/state.txt', { computer_id: perm.computer_id, temporary: false }), 'one\n');
  await ok(c, 'computer_delete', { computer_id: perm.computer_id, temporary: false });
  await s.close();
});

test('go_busybox bad input: crafted ids, the quota, symlinks toward the host kept as links, a delete racing restores', async () => {
  const s = await busybox(['--max-snapshots', '1']);
  const c = s.client;
  const id = (await ok(c, 'computer_create', {})).computer_id;
  const unknown = `snap-${'0'.repeat(32)}`;
  for (const bad of ['../../etc/passwd', 'snap-/../x', `snap-${'a'.repeat(10240)}`, 'snap-abc', `snap-${'0'.repeat(32)}/meta.json`]) {
    await refused(c, 'computer_restore', { computer_id: id, snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'snapshot_delete', { snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'computer_create', { from_snapshot: bad }, /snapshot_id must be a snapshot id/);
  }
  await refused(c, 'computer_restore', { computer_id: id, snapshot_id: unknown }, /Snapshot 'snap-0+' was not found/);
  await refused(c, 'computer_create', { from_snapshot: unknown }, /was not found/);
  await refused(c, 'computer_snapshot', { computer_id: 'no-such-computer' }, /not found/);
  for (const count of [0, -1, 10000]) await refused(c, 'computer_create', { from_snapshot: unknown, count }, /count: must be a whole number from 1 to 64/);

  // Symlinks planted toward the host's files are copied as symlinks, never followed.
  const root = path.join(state, 'go_busybox', id, 'root');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'esc'));
  fs.symlinkSync(outside, path.join(root, 'escdir'));
  await sh(c, 'echo base > /data.txt', { computer_id: id });
  const s1 = await ok(c, 'computer_snapshot', { computer_id: id });
  const copy = path.join(snapDir(s1.snapshot_id), 'root');
  assert.ok(fs.lstatSync(path.join(copy, 'esc')).isSymbolicLink());
  assert.ok(fs.lstatSync(path.join(copy, 'escdir')).isSymbolicLink());
  assert.deepEqual(fs.readdirSync(outside), ['secret.txt'], 'nothing copied into the host folder');
  // --max-snapshots 1: a second is refused with nothing made.
  await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
  assert.deepEqual(fs.readdirSync(path.join(state, 'go_busybox', '.snapshots')), [s1.snapshot_id]);

  // A delete racing restores: either the restore happened (the delete refused "in use") or the
  // snapshot was gone first (the restore refused); the computer always stays, whole.
  let restoredSome = false;
  for (let round = 0; round < 8; round++) {
    const snap = round === 0 ? s1 : await ok(c, 'computer_snapshot', { computer_id: id });
    await sh(c, `echo round-${round} > /data.txt`, { computer_id: id });
    const [r, d] = await Promise.all([call(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id }),
      call(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id })]);
    const computers = (await ok(c, 'computer_list', {})).computers.map((x) => x.computer_id);
    assert.ok(computers.includes(id), `round ${round}: the computer is gone`);
    const data = await sh(c, 'cat /data.txt', { computer_id: id });
    if (!r.isError) {
      restoredSome = true;
      assert.equal(data, 'base\n');
    } else {
      assert.match(r.content[0].text, /was not found/);
      assert.equal(data, `round-${round}\n`);
      await sh(c, 'echo base > /data.txt', { computer_id: id });
    }
    if (d.isError) {
      assert.match(d.content[0].text, /is in use/);
      await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
    }
  }
  process.stderr.write(`race: a restore won in some round: ${restoredSome}\n`);

  // A snapshot during a factory reset, and one during a delete: made, or refused with a clear
  // error and nothing left in the snapshots' folder.
  assert.equal((await ok(c, 'snapshot_list', {})).count, 0, 'the race left no snapshot');
  const snaps = () => fs.readdirSync(path.join(state, 'go_busybox', '.snapshots'));
  for (const other of ['computer_factory_reset', 'computer_delete']) {
    await sh(c, 'seq 1 3000 > /n.txt; mkdir -p /a/b/c; seq 1 100 > /a/b/c/m.txt', { computer_id: id });
    const [snap, op] = await Promise.all([call(c, 'computer_snapshot', { computer_id: id }), call(c, other, { computer_id: id })]);
    assert.equal(op.isError, false, JSON.stringify(op));
    if (snap.isError) {
      assert.match(snap.content[0].text, /not found|was reset or deleted while its snapshot was taken: nothing was saved/);
      assert.deepEqual(snaps(), [], 'a refused snapshot leaves nothing');
    } else await ok(c, 'snapshot_delete', { snapshot_id: snap.structuredContent.snapshot_id });
  }
  assert.deepEqual(snaps(), []);
  await s.close();
});

const freePort = () => new Promise((resolve, reject) => {
  const srv = net.createServer();
  srv.once('error', reject);
  srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
});

async function startHttp(flags = []) {
  const port = await freePort();
  const e = { ...process.env, ...env() };
  delete e.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...TOOLS, '--tokens-file', tokensFile, ...flags],
    { stdio: ['ignore', 'ignore', 'inherit'], env: e });
  procs.add(proc);
  assert.ok(await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 }), 'server not ready');
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), proc };
}
const auth = (who) => ({ requestInit: { headers: { Authorization: `Bearer ${TOKENS[who]}` } } });
async function v1(url, who) { const c = new ClientV1({ name: 'wasm-snap', version: '1' }, { capabilities: {} }); clients.add(c); await c.connect(new HttpV1(url, auth(who))); return c; }
async function v2(url, who) {
  const c = new ClientV2({ name: 'wasm-snap', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(url, auth(who)));
  return c;
}

test('go_busybox HTTP: another principal\'s snapshot is refused in both eras; --share-snapshots shares use, not deletion', async () => {
  let srv = await startHttp();
  const a1 = await v1(srv.url, 'alice');
  const comp = (await ok(a1, 'computer_create', {})).computer_id;
  await sh(a1, 'echo alice-data > /a.txt', { computer_id: comp });
  const snap = await ok(a1, 'computer_snapshot', { computer_id: comp, name: 'alice' });
  const b1 = await v1(srv.url, 'bob');
  const bcomp = (await ok(b1, 'computer_create', {})).computer_id;
  assert.ok(!(await ok(b1, 'snapshot_list', {})).snapshots.some((x) => x.snapshot_id === snap.snapshot_id));
  await refused(b1, 'computer_restore', { computer_id: bcomp, snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(b1, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  await refused(b1, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(b1, 'computer_snapshot', { computer_id: comp }, /not owned|not found|another/);
  const b2 = await v2(srv.url, 'bob');
  const bh = await ok(b2, 'terminal_execute', { command: 'true' });
  await refused(b2, 'computer_restore', { computer_id: bh.computer_id, snapshot_id: snap.snapshot_id, sandbox_handle: bh.sandbox_handle }, /was not found/);
  await refused(b2, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  const a2 = await v2(srv.url, 'alice');
  const fork = await ok(a2, 'computer_create', { from_snapshot: snap.snapshot_id });
  assert.equal((await ok(a2, 'terminal_execute', { command: 'cat /a.txt', sandbox_handle: fork.sandbox_handle })).stdout, 'alice-data\n');
  for (const c of [a1, b1, a2, b2]) await c.close();
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);

  srv = await startHttp(['--share-snapshots']);
  const a3 = await v1(srv.url, 'alice');
  const b3 = await v1(srv.url, 'bob');
  const again = (await ok(b3, 'snapshot_list', {})).snapshots.find((x) => x.snapshot_id === snap.snapshot_id);
  assert.ok(again, 'shared, and found again after the restart');
  assert.match(again.made_by, /^[0-9a-f]{32}$/);
  const bf = await ok(b3, 'computer_create', { from_snapshot: snap.snapshot_id, count: 2 });
  assert.equal(await sh(b3, 'cat /a.txt', { computer_id: bf.computers[1].computer_id }), 'alice-data\n');
  await refused(b3, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await ok(a3, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
});

test('go_busybox: --max-principal-snapshots: a principal at its share is refused, another is still served; two at once make one; no share for the one principal', async () => {
  const srv = await startHttp(['--max-snapshots', '4', '--max-principal-snapshots', '1']);
  const a = await v1(srv.url, 'alice');
  const b = await v1(srv.url, 'bob');
  const acomp = (await ok(a, 'computer_create', {})).computer_id;
  const bcomp = (await ok(b, 'computer_create', {})).computer_id;
  const s1 = await ok(a, 'computer_snapshot', { computer_id: acomp });
  await refused(a, 'computer_snapshot', { computer_id: acomp }, /You keep at most 1 snapshots \(--max-principal-snapshots\)/);
  assert.equal((await ok(a, 'snapshot_list', {})).count, 1, 'nothing made by the refused one');
  // Bob under his share is served while alice is at hers.
  const bs = await ok(b, 'computer_snapshot', { computer_id: bcomp });
  await ok(a, 'snapshot_delete', { snapshot_id: s1.snapshot_id });
  // Two at once for alice: exactly one is made (one being made counts against the share).
  const two = await Promise.all([call(a, 'computer_snapshot', { computer_id: acomp }), call(a, 'computer_snapshot', { computer_id: acomp })]);
  assert.equal(two.filter((r) => !r.isError).length, 1, JSON.stringify(two));
  assert.match(two.find((r) => r.isError).content[0].text, /--max-principal-snapshots/);
  const made = two.find((r) => !r.isError).structuredContent;
  await ok(a, 'snapshot_delete', { snapshot_id: made.snapshot_id });
  await ok(b, 'snapshot_delete', { snapshot_id: bs.snapshot_id });
  for (const c of [a, b]) await c.close();
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);

  // A server without --tokens-file has one principal, bound by --max-snapshots only.
  const s = await busybox(['--max-snapshots', '2', '--max-principal-snapshots', '1']);
  const c = s.client;
  clients.add(c);
  const id = (await ok(c, 'computer_create', {})).computer_id;
  const x = await ok(c, 'computer_snapshot', { computer_id: id });
  const y = await ok(c, 'computer_snapshot', { computer_id: id });
  await refused(c, 'computer_snapshot', { computer_id: id }, /at most 2 snapshots \(--max-snapshots\)/);
  for (const z of [x, y]) await ok(c, 'snapshot_delete', { snapshot_id: z.snapshot_id });
});
