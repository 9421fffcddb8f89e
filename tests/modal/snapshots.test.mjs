// Snapshots (issue 31) on the modal backend, against the local fake of Modal (fake_modal.py:
// SandboxSnapshotFs as a committed image of its Docker container, the records in a named Dict,
// ImageDelete). Through the official SDK: write, snapshot, change, restore, read the old content;
// three forks each independent; a restarted server finds the snapshot again from Modal's own
// record (the Dict); another principal is refused in both eras; bad ids; a failing or hostile
// Modal: DictPop failing, DictUpdate's reply lost, a flooded Dict.
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
const PY = process.env.MODAL_FAKE_PYTHON || 'python3';
const RND = randomBytes(6).toString('hex');
const TOKEN_ID = `ak-fake${RND}`;
const TOKEN_SECRET = `as-fake${RND}`;
const TOOLS = ['--backend', 'modal', '--tools', 'lifecycle,snapshots'];
const SNAP_RE = /^snap-[0-9a-f]{32}$/;
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-modal-snap-'));
const TOKENS = { alice: randomBytes(16).toString('hex'), bob: randomBytes(16).toString('hex') };
const tokensFile = path.join(dir, 'tokens');
fs.writeFileSync(tokensFile, Object.entries(TOKENS).map(([n, t]) => `${n} ${t}`).join('\n') + '\n', { mode: 0o600 });
let fake;
let api;
let ctl;
const procs = new Set();
const clients = new Set();
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); return box; };
const env = () => {
  const e = { ...process.env, MODAL_SERVER_URL: api, MODAL_TOKEN_ID: TOKEN_ID, MODAL_TOKEN_SECRET: TOKEN_SECRET,
    MODAL_CONFIG_PATH: path.join(dir, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '' };
  delete e.KILNTAINERS_AUTH_TOKEN;
  return e;
};
const state = async () => (await fetch(`${ctl}/state`)).json();
// The snapshots' records in Modal's Dict, and the images the fake keeps.
const records = async () => Object.values((await state()).dicts).reduce((a, d) => ({ ...a, ...d }), {});

before(async () => {
  ({ proc: fake, api, ctl } = await new Promise((resolve, reject) => {
    const p = spawn(PY, [path.join(HERE, 'fake_modal.py'), '--token-id', TOKEN_ID, '--token-secret', TOKEN_SECRET],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => {
      out += c;
      const m = /PORTS (\d+) (\d+) (\d+)/.exec(out);
      if (m) resolve({ proc: p, api: `http://127.0.0.1:${m[1]}`, ctl: `http://127.0.0.1:${m[3]}` });
    });
    p.on('exit', (code) => reject(new Error(`fake_modal.py exited ${code}`)));
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
  const c = new ClientV1({ name: 'modal-snap-test', version: '1' }, { capabilities: {} });
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
    ? new ClientV2({ name: 'modal-snap-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
    : new ClientV1({ name: 'modal-snap-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(v2 ? new HttpV2(new URL(url), auth(who)) : new HttpV1(new URL(url), auth(who)));
  return c;
}
const sh = async (c, command, where) => (await ok(c, 'terminal_execute', { ...where, command })).stdout;

test('modal: write, snapshot, change, restore, read the old content; three forks each independent; delete', async () => {
  const c = await stdio();
  const id = (await ok(c, 'computer_create', { temporary: true })).computer_id;
  const where = { computer_id: id };
  assert.equal(await sh(c, 'echo one > /root/state.txt && cat /root/state.txt', where), 'one\n');
  const snap = await ok(c, 'computer_snapshot', { computer_id: id, name: 'first state' });
  assert.match(snap.snapshot_id, SNAP_RE);
  assert.equal(snap.computer_id, id);
  // Modal's own record of it: an entry of the Dict, naming the image SandboxSnapshotFs made.
  const rec = JSON.parse((await records())[snap.snapshot_id]);
  assert.equal(rec.computer_id, id);
  assert.equal(rec.name, 'first state');
  assert.ok((await state()).images[rec.image_id], 'the snapshot image on Modal');

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

  const listed = await ok(c, 'snapshot_list', {});
  const row = listed.snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(row, JSON.stringify(listed));
  assert.equal(row.computer_id, id);
  assert.match(row.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  for (const f of ids) await ok(c, 'computer_delete', { computer_id: f });
  assert.equal((await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id })).deleted, true);
  assert.equal((await records())[snap.snapshot_id], undefined, 'its record gone from Modal');
  assert.equal((await state()).images[rec.image_id], undefined, 'its image gone from Modal');
  await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(c, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  assert.equal((await ok(c, 'snapshot_list', {})).count, 0);
  await ok(c, 'computer_delete', { computer_id: id });
});

test('modal: bad ids (unknown, crafted 10 KB, path characters) never reach Modal; --max-snapshots', async () => {
  const c = await stdio(['--max-snapshots', '1']);
  const id = (await ok(c, 'computer_create', {})).computer_id;
  await fetch(`${ctl}/clear`, { method: 'POST', body: '{}' });
  const unknown = `snap-${'0'.repeat(32)}`;
  for (const bad of ['../../etc/passwd', `snap-${'a'.repeat(10240)}`, `snap-${'0'.repeat(31)}/`, 'snap-%2e%2e%2f', `snap-${'0'.repeat(32)}/../x`]) {
    await refused(c, 'computer_restore', { computer_id: id, snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'snapshot_delete', { snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'computer_create', { from_snapshot: bad }, /snapshot_id must be a snapshot id/);
  }
  const seen = (await state()).requests;
  assert.deepEqual(seen.filter((r) => /^Dict|^ImageDelete|^SandboxSnapshotFs/.test(r.method)), [], 'no snapshot call reached Modal');
  await refused(c, 'computer_restore', { computer_id: id, snapshot_id: unknown }, /Snapshot 'snap-0+' was not found/);
  await refused(c, 'snapshot_delete', { snapshot_id: unknown }, /was not found/);
  await refused(c, 'computer_create', { from_snapshot: unknown }, /was not found/);
  await refused(c, 'computer_snapshot', { computer_id: 'no-such-computer' }, /not found/);
  // The quota: a second snapshot is refused, nothing made; a delete makes room.
  const s1 = await ok(c, 'computer_snapshot', { computer_id: id });
  const n = Object.keys((await state()).images).length;
  await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
  assert.equal(Object.keys((await state()).images).length, n, 'nothing made by the refused snapshot');
  await ok(c, 'snapshot_delete', { snapshot_id: s1.snapshot_id });
  const s2 = await ok(c, 'computer_snapshot', { computer_id: id });
  await ok(c, 'snapshot_delete', { snapshot_id: s2.snapshot_id });
  await ok(c, 'computer_delete', { computer_id: id });
});

test('modal failing or hostile: a failed DictPop keeps the snapshot whole; a DictUpdate whose reply is lost is read back; a flooded Dict is refused', async () => {
  const c = await stdio();
  const id = (await ok(c, 'computer_create', {})).computer_id;
  const where = { computer_id: id };
  const inject = (j) => fetch(`${ctl}/inject`, { method: 'POST', body: JSON.stringify(j) });
  try {
    await sh(c, 'echo kept > /root/k.txt', where);
    const snap = await ok(c, 'computer_snapshot', { computer_id: id });
    const rec = JSON.parse((await records())[snap.snapshot_id]);
    // The record is removed first: when that fails, the image stays and a restore still works.
    await inject({ method: 'DictPop', code: 'ABORTED', count: 1 });
    await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /./);
    await fetch(`${ctl}/clear`, { method: 'POST', body: '{}' });
    assert.ok((await state()).images[rec.image_id], 'the image kept while its record is');
    await sh(c, 'echo changed > /root/k.txt', where);
    await ok(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
    assert.equal(await sh(c, 'cat /root/k.txt', where), 'kept\n');
    await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
    assert.equal((await state()).images[rec.image_id], undefined, 'its image gone after its record');

    // DictUpdate lands but its replies are lost: read back, the snapshot is made, its image kept.
    await inject({ method: 'DictUpdate', code: 'ABORTED', count: 1, after: true });
    const late = await ok(c, 'computer_snapshot', { computer_id: id });
    await fetch(`${ctl}/clear`, { method: 'POST', body: '{}' });
    const lrec = JSON.parse((await records())[late.snapshot_id]);
    assert.ok((await state()).images[lrec.image_id], 'the image of the recorded snapshot kept');
    await sh(c, 'echo changed > /root/k.txt', where);
    await ok(c, 'computer_restore', { computer_id: id, snapshot_id: late.snapshot_id });
    assert.equal(await sh(c, 'cat /root/k.txt', where), 'kept\n');
    await ok(c, 'snapshot_delete', { snapshot_id: late.snapshot_id });

    // A Dict of more records than any listing reads: refused, not read into memory.
    await fetch(`${ctl}/flood`, { method: 'POST', body: JSON.stringify({ entries: 5001 }) });
    await refused(c, 'snapshot_list', {}, /more than 5000 records/);
    await refused(c, 'computer_snapshot', { computer_id: id }, /more than 5000 records/);
  } finally {
    await fetch(`${ctl}/clear`, { method: 'POST', body: '{}' });
  }
  await ok(c, 'computer_delete', { computer_id: id });
});

test('modal HTTP: another principal is refused in both eras; a restarted server finds the snapshot again; --share-snapshots shares use, not deletion', async () => {
  let srv = await startHttp();
  const a1 = await http(srv.url, 'alice');
  const comp = (await ok(a1, 'computer_create', {})).computer_id;
  await sh(a1, 'echo alice-data > /root/a.txt', { computer_id: comp });
  const snap = await ok(a1, 'computer_snapshot', { computer_id: comp, name: 'alice' });
  assert.match(snap.made_by, /^[0-9a-f]{32}$/);

  const b1 = await http(srv.url, 'bob');
  const bcomp = (await ok(b1, 'computer_create', {})).computer_id;
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

  // Restarted with --share-snapshots: found again from Modal's record, with its maker; alice
  // forks it, and so does bob now, who still may not delete it.
  for (const c of [a1, b1, b2]) await c.close();
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
  srv = await startHttp(['--share-snapshots']);
  const a3 = await http(srv.url, 'alice');
  const again = (await ok(a3, 'snapshot_list', {})).snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(again, 'found again after the restart');
  assert.equal(again.made_by, snap.made_by);
  assert.equal(again.computer_id, comp);
  assert.equal(again.name, 'alice');
  const a4 = await http(srv.url, 'alice', true);
  const fork = await ok(a4, 'computer_create', { from_snapshot: snap.snapshot_id });
  assert.ok(fork.sandbox_handle, JSON.stringify(fork));
  assert.equal((await ok(a4, 'terminal_execute', { command: 'cat /root/a.txt', sandbox_handle: fork.sandbox_handle })).stdout, 'alice-data\n');
  await ok(a4, 'computer_release', { sandbox_handle: fork.sandbox_handle });
  const b3 = await http(srv.url, 'bob');
  assert.ok((await ok(b3, 'snapshot_list', {})).snapshots.some((s) => s.snapshot_id === snap.snapshot_id), 'shared');
  const bf = await ok(b3, 'computer_create', { from_snapshot: snap.snapshot_id });
  assert.equal(await sh(b3, 'cat /root/a.txt', { computer_id: bf.computer_id }), 'alice-data\n');
  await refused(b3, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  await ok(b3, 'computer_delete', { computer_id: bf.computer_id });
  await ok(a3, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  assert.equal((await call(a3, 'snapshot_list', {})).structuredContent.count, 0);
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
});
