// Snapshots (issue 31) on the e2b backend, against the local fake of E2B (fake_e2b.py: its snapshot
// API, POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE /templates/{id}, as committed images
// of its Docker containers). Through the official SDK: write, snapshot, change, restore, read the
// old content; three forks each independent; a restarted server finds the snapshot again from
// E2B's own record (the snapshot's name); another principal is refused in both eras; bad ids; a
// lagging or hostile E2B (/_fake/behave): the quota holds while its list lags, a list past 50 pages
// fails, rows with a '..' id or a time past year 9999 are not ours.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, ClientV2, HttpV1, HttpV2, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor, waitExit, freePort } from '../integration/lib.mjs';
import { call, ok, refused } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KEY = 'e2b_fake' + randomBytes(6).toString('hex');
const TOOLS = ['--backend', 'e2b', '--tools', 'lifecycle,snapshots'];
const SNAP_RE = /^snap-[0-9a-f]{32}$/;
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-e2b-snap-'));
const TOKENS = { alice: randomBytes(16).toString('hex'), bob: randomBytes(16).toString('hex') };
const tokensFile = path.join(dir, 'tokens');
fs.writeFileSync(tokensFile, Object.entries(TOKENS).map(([n, t]) => `${n} ${t}`).join('\n') + '\n', { mode: 0o600 });
let fake;
let api;
const procs = new Set();
const clients = new Set();
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); return box; };
const env = () => { const e = { ...process.env, E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: '' }; delete e.KILNTAINERS_AUTH_TOKEN; return e; };
const templates = async () => (await fetch(`${api}/_fake/templates`)).json();

before(async () => {
  ({ proc: fake, url: api } = await new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_e2b.py'), '--key', KEY, '--snapshot-page', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => { out += c; const m = /PORT (\d+)/.exec(out); if (m) resolve({ proc: p, url: `http://127.0.0.1:${m[1]}` }); });
    p.on('exit', (code) => reject(new Error(`fake_e2b.py exited ${code}`)));
  }));
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  fake?.kill('SIGTERM');   // the fake removes its containers and snapshot images
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  fs.rmSync(dir, { recursive: true, force: true });
});

async function stdio(flags = []) {
  const t = new StdioV1({ command: MSC_BIN, args: [...TOOLS, ...flags], stderr: 'pipe', env: env() });
  watch(t.stderr);
  const c = new ClientV1({ name: 'e2b-snap-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function startHttp(flags = []) {
  const port = await freePort();
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...TOOLS,
    '--tokens-file', tokensFile, ...flags], { stdio: ['ignore', 'ignore', 'pipe'], env: env() });
  procs.add(proc);
  const box = watch(proc.stderr);
  const up = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(up, `server not ready: ${box.text.slice(-2000)}`);
  return { url: `http://127.0.0.1:${port}/mcp`, proc };
}

const auth = (who) => ({ requestInit: { headers: { Authorization: `Bearer ${TOKENS[who]}` } } });
async function http(url, who, v2 = false) {
  const c = v2
    ? new ClientV2({ name: 'e2b-snap-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
    : new ClientV1({ name: 'e2b-snap-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(v2 ? new HttpV2(new URL(url), auth(who)) : new HttpV1(new URL(url), auth(who)));
  return c;
}
const sh = async (c, command, where) => (await ok(c, 'terminal_execute', { ...where, command })).stdout;

test('e2b: write, snapshot, change, restore, read the old content; three forks each independent; delete', async () => {
  const c = await stdio();
  const id = (await ok(c, 'computer_create', { temporary: true })).computer_id;
  const where = { computer_id: id };
  assert.equal(await sh(c, 'echo one > /root/state.txt && cat /root/state.txt', where), 'one\n');
  const snap = await ok(c, 'computer_snapshot', { computer_id: id, name: 'first state' });
  assert.match(snap.snapshot_id, SNAP_RE);
  assert.equal(snap.computer_id, id);
  // E2B's own record of it: a snapshot template named after it.
  const tpl = Object.values(await templates()).find((t) => t.alias?.startsWith(`kt-${snap.snapshot_id.slice(5)}-`));
  assert.ok(tpl, 'a snapshot template on E2B');

  await sh(c, 'echo two > /root/state.txt; touch /root/later', where);
  const back = await ok(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
  assert.equal(back.computer_id, id);
  assert.equal(back.temporary, true);
  assert.equal(await sh(c, 'cat /root/state.txt; test -e /root/later || echo gone', where), 'one\ngone\n');

  const forks = await ok(c, 'computer_create', { from_snapshot: snap.snapshot_id, count: 3 });
  assert.equal(forks.count, 3);
  const ids = forks.computers.map((f) => f.computer_id);
  assert.equal(new Set(ids).size, 3);
  assert.ok(!ids.includes(id));
  for (const f of ids) {
    assert.equal(await sh(c, 'cat /root/state.txt', { computer_id: f }), 'one\n');
    await sh(c, `echo mine-${f} > /root/state.txt`, { computer_id: f });
  }
  for (const f of ids) assert.equal(await sh(c, 'cat /root/state.txt', { computer_id: f }), `mine-${f}\n`);
  assert.equal(await sh(c, 'cat /root/state.txt', where), 'one\n');

  // Two more (of two forks): the list reads E2B's pages (two a page here) and finds all three.
  const more = [await ok(c, 'computer_snapshot', { computer_id: ids[0] }), await ok(c, 'computer_snapshot', { computer_id: ids[1] })];
  const listed = await ok(c, 'snapshot_list', {});
  assert.equal(listed.count, 3, JSON.stringify(listed));
  const row = listed.snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(row, JSON.stringify(listed));
  assert.equal(row.computer_id, id);
  assert.match(row.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(more.map((m) => listed.snapshots.find((s) => s.snapshot_id === m.snapshot_id)?.computer_id), ids.slice(0, 2));
  for (const m of more) await ok(c, 'snapshot_delete', { snapshot_id: m.snapshot_id });

  for (const f of ids) await ok(c, 'computer_delete', { computer_id: f });
  assert.equal((await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id })).deleted, true);
  assert.ok(!Object.values(await templates()).some((t) => t.alias === tpl.alias), 'gone from E2B');
  await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(c, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  assert.equal((await ok(c, 'snapshot_list', {})).count, 0);
  await ok(c, 'computer_delete', { computer_id: id });
});

test('e2b: bad ids (unknown, crafted 10 KB, path characters) never reach E2B; --max-snapshots', async () => {
  const c = await stdio(['--max-snapshots', '1']);
  const id = (await ok(c, 'computer_create', {})).computer_id;
  await fetch(`${api}/_fake/clear`, { method: 'POST' });
  const unknown = `snap-${'0'.repeat(32)}`;
  for (const bad of ['../../etc/passwd', `snap-${'a'.repeat(10240)}`, `snap-${'0'.repeat(31)}/`, 'snap-%2e%2e%2f', `snap-${'0'.repeat(32)}/../x`]) {
    await refused(c, 'computer_restore', { computer_id: id, snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'snapshot_delete', { snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'computer_create', { from_snapshot: bad }, /snapshot_id must be a snapshot id/);
  }
  const seen = await (await fetch(`${api}/_fake/requests`)).json();
  assert.deepEqual(seen.filter((r) => /snapshots|templates/.test(r.path)), [], 'no snapshot call reached E2B');
  await refused(c, 'computer_restore', { computer_id: id, snapshot_id: unknown }, /Snapshot 'snap-0+' was not found/);
  await refused(c, 'snapshot_delete', { snapshot_id: unknown }, /was not found/);
  await refused(c, 'computer_create', { from_snapshot: unknown }, /was not found/);
  await refused(c, 'computer_snapshot', { computer_id: 'no-such-computer' }, /not found/);
  // The quota: a second snapshot is refused, nothing made; a delete makes room.
  const s1 = await ok(c, 'computer_snapshot', { computer_id: id });
  const n = Object.keys(await templates()).length;
  await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
  assert.equal(Object.keys(await templates()).length, n, 'nothing made by the refused snapshot');
  await ok(c, 'snapshot_delete', { snapshot_id: s1.snapshot_id });
  const s2 = await ok(c, 'computer_snapshot', { computer_id: id });
  await ok(c, 'snapshot_delete', { snapshot_id: s2.snapshot_id });
  await ok(c, 'computer_delete', { computer_id: id });
});

test('e2b lagging or hostile: the quota holds while GET /snapshots lags; past its page cap a list fails; bad rows are not ours', async () => {
  const c = await stdio(['--max-snapshots', '1']);
  const id = (await ok(c, 'computer_create', {})).computer_id;
  const behave = (b) => fetch(`${api}/_fake/behave`, { method: 'POST', body: JSON.stringify(b) });
  try {
    // A new snapshot stays out of E2B's list for a minute: back-to-back, the second is refused.
    await behave({ listLag: 60 });
    const s1 = await ok(c, 'computer_snapshot', { computer_id: id });
    const n = Object.keys(await templates()).length;
    await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
    assert.equal(Object.keys(await templates()).length, n, 'nothing made by the refused snapshot');
    await behave({ listLag: 0 });
    await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
    await ok(c, 'snapshot_delete', { snapshot_id: s1.snapshot_id });

    // A cursor on every page: no partial list taken for the whole (a quota undercount).
    await behave({ endlessPages: true });
    await refused(c, 'snapshot_list', {}, /more than 50 pages/);
    await refused(c, 'computer_snapshot', { computer_id: id }, /more than 50 pages/);
    await behave({ endlessPages: false });

    // Rows named as ours but with a path-segment id, or a time past any calendar: not ours.
    const dots = randomBytes(16).toString('hex');
    const far = randomBytes(16).toString('hex');
    await fetch(`${api}/_fake/clear`, { method: 'POST' });
    await behave({ extraRows: [
      { snapshotID: '..', names: [`kt-${dots}-x-1700000000-${id}`] },
      { snapshotID: `fake-team/kt-${far}-x-99999999999999999999-${id}:default`, names: [`fake-team/kt-${far}-x-99999999999999999999-${id}:default`] },
      { snapshotID: `fake-team/kt-${far}-x-999999999999-${id}:default`, names: [] },
    ] });
    assert.equal((await ok(c, 'snapshot_list', {})).count, 0);
    await refused(c, 'snapshot_delete', { snapshot_id: `snap-${dots}` }, /was not found/);
    await refused(c, 'snapshot_delete', { snapshot_id: `snap-${far}` }, /was not found/);
    const seen = await (await fetch(`${api}/_fake/requests`)).json();
    assert.deepEqual(seen.filter((r) => r.method === 'DELETE'), [], 'no DELETE reached E2B');
  } finally {
    await fetch(`${api}/_fake/clear`, { method: 'POST' });
  }
  await ok(c, 'computer_delete', { computer_id: id });
});

test('e2b HTTP: another principal is refused in both eras; a principal\'s share; a restarted server finds the snapshot again', async () => {
  let srv = await startHttp(['--max-principal-snapshots', '1']);
  const a1 = await http(srv.url, 'alice');
  const comp = (await ok(a1, 'computer_create', {})).computer_id;
  await sh(a1, 'echo alice-data > /root/a.txt', { computer_id: comp });
  const snap = await ok(a1, 'computer_snapshot', { computer_id: comp, name: 'alice' });
  assert.match(snap.made_by, /^[0-9a-f]{32}$/);

  await refused(a1, 'computer_snapshot', { computer_id: comp }, /You keep at most 1 snapshots \(--max-principal-snapshots\)/);
  const b1 = await http(srv.url, 'bob');
  const bcomp = (await ok(b1, 'computer_create', {})).computer_id;
  // Bob, under his share, is served while alice is at hers.
  await ok(b1, 'snapshot_delete', { snapshot_id: (await ok(b1, 'computer_snapshot', { computer_id: bcomp })).snapshot_id });
  assert.ok(!(await ok(b1, 'snapshot_list', {})).snapshots.some((s) => s.snapshot_id === snap.snapshot_id));
  await refused(b1, 'computer_restore', { computer_id: bcomp, snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(b1, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  await refused(b1, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(b1, 'computer_snapshot', { computer_id: comp }, /not owned|not found/);
  const b2 = await http(srv.url, 'bob', true);
  const bh = await ok(b2, 'terminal_execute', { command: 'true' });
  await refused(b2, 'computer_restore', { computer_id: bh.computer_id, snapshot_id: snap.snapshot_id, sandbox_handle: bh.sandbox_handle }, /was not found/);
  await refused(b2, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  await ok(b2, 'computer_release', { sandbox_handle: bh.sandbox_handle });
  await ok(b1, 'computer_delete', { computer_id: bcomp });

  // Restarted: found again from E2B's record, with its maker; alice forks it, bob still may not.
  for (const c of [a1, b1, b2]) await c.close();
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
  srv = await startHttp();
  const a3 = await http(srv.url, 'alice');
  const again = (await ok(a3, 'snapshot_list', {})).snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(again, 'found again after the restart');
  assert.equal(again.made_by, snap.made_by);
  assert.equal(again.computer_id, comp);
  const a4 = await http(srv.url, 'alice', true);
  const fork = await ok(a4, 'computer_create', { from_snapshot: snap.snapshot_id });
  assert.ok(fork.sandbox_handle, JSON.stringify(fork));
  assert.equal((await ok(a4, 'terminal_execute', { command: 'cat /root/a.txt', sandbox_handle: fork.sandbox_handle })).stdout, 'alice-data\n');
  await ok(a4, 'computer_release', { sandbox_handle: fork.sandbox_handle });
  const b3 = await http(srv.url, 'bob');
  await refused(b3, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  await ok(a3, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  assert.equal((await call(a3, 'snapshot_list', {})).structuredContent.count, 0);
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
});
