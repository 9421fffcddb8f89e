// Snapshots, rollback and forks (issue 31, --tools snapshots): computer_snapshot, computer_restore,
// snapshot_list, snapshot_delete and computer_create's from_snapshot and count, through the
// official SDK (v1 client at 2025-11-25 over stdio and HTTP, v2 client at 2026-07-28) on the
// docker backend (Docker, or Podman with MSC_TEST_ENGINE=podman). Each server has its own
// --driver-id: its snapshots are its own (the quota counts them); every container and image made
// here is removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MSC_BIN, ENGINE, docker, waitFor, waitExit, sleep, freePort } from './lib.mjs';

const RUN = `snap${randomBytes(3).toString('hex')}`;
const LABEL = `--docker-run-flag=--label=msc.snap-test=${RUN}`;
const TOOLS = ['--tools', 'lifecycle,snapshots', '--driver-id', RUN, ...(ENGINE === 'podman' ? ['--engine', 'podman'] : [])];
const SNAP_RE = /^snap-[0-9a-f]{32}$/;

const procs = new Set();
const clients = new Set();
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); return box; };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-snap-'));
const TOKENS = { alice: randomBytes(16).toString('hex'), bob: randomBytes(16).toString('hex') };
const tokensFile = path.join(dir, 'tokens');
fs.writeFileSync(tokensFile, Object.entries(TOKENS).map(([n, t]) => `${n} ${t}`).join('\n') + '\n', { mode: 0o600 });

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  // the servers stop side by side (each removes its own temporary computers)
  await Promise.all([...procs].map(async (p) => {
    if (p.exitCode === null && p.signalCode === null) { p.kill('SIGTERM'); await waitExit(p, 8000); }
  }));
  await sleep(500);
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.snap-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
  const imgs = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${RUN}`])).stdout.trim();
  if (imgs) await docker(['rmi', '-f', ...new Set(imgs.split(/\s+/))]);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startHttp(flags = []) {
  const port = await freePort();
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), LABEL, ...TOOLS,
    '--tokens-file', tokensFile, ...flags], { stdio: ['ignore', 'ignore', 'pipe'], env });
  procs.add(proc);
  const box = watch(proc.stderr);
  const url = `http://127.0.0.1:${port}/mcp`;
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, `server not ready: ${box.text.slice(-2000)}`);
  return { url, proc, box };
}

async function stop(srv) {
  srv.proc.kill('SIGTERM');
  await waitExit(srv.proc, 15000);
}

async function stdioV1(flags = []) {
  // The whole environment: DOCKER_HOST names Podman's socket in the podman runs.
  const t = new StdioV1({ command: MSC_BIN, args: [LABEL, ...TOOLS, ...flags], stderr: 'pipe', env: { ...process.env } });
  const box = watch(t.stderr);
  const c = new ClientV1({ name: 'snap-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  c.box = box;
  return c;
}

const auth = (who) => ({ requestInit: { headers: { Authorization: `Bearer ${TOKENS[who]}` } } });

async function v1Http(url, who) {
  const c = new ClientV1({ name: 'snap-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url), auth(who)));
  return c;
}

async function v2Http(url, who) {
  const c = new ClientV2({ name: 'snap-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url), auth(who)));
  return c;
}

// 180 s per call: forks and restores on a loaded CI host can pass the SDK's 60 s.
const call = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 180000 });
async function ok(c, name, args) {
  const res = await call(c, name, args);
  assert.equal(res.isError, false, `${name}: ${JSON.stringify(res)}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, 'text and structuredContent agree');
  return res.structuredContent;
}
async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)} should fail: ${JSON.stringify(res)}`);
  const text = res.content.map((b) => b.text).join('\n');
  assert.match(text, re, `${name}: ${text}`);
  return text;
}
const sh = async (c, command, extra = {}) => (await ok(c, 'terminal_execute', { command, ...extra }));

test('stdio (2025): write, snapshot, change, restore, read the old content; forks each see it and keep their own changes', async () => {
  const c = await stdioV1();
  const names = (await c.listTools()).tools.map((t) => t.name);
  for (const n of ['computer_snapshot', 'computer_restore', 'snapshot_list', 'snapshot_delete'])
    assert.ok(names.includes(n), `${n} in ${names}`);
  const create = (await c.listTools()).tools.find((t) => t.name === 'computer_create');
  assert.ok(create.inputSchema.properties.from_snapshot && create.inputSchema.properties.count);

  const made = await ok(c, 'computer_create', { temporary: true });
  const id = made.computer_id;
  assert.equal((await sh(c, 'echo one > /root/state.txt && cat /root/state.txt', { computer_id: id })).stdout, 'one\n');

  // A command running meanwhile goes on: the snapshot does not pause or stop it.
  const running = sh(c, 'sleep 4; echo still-ran', { computer_id: id });
  await sleep(1000);
  const snap = await ok(c, 'computer_snapshot', { computer_id: id, name: 'first state' });
  assert.match(snap.snapshot_id, SNAP_RE);
  assert.equal(snap.name, 'first state');
  assert.equal(snap.computer_id, id);
  assert.ok(snap.size_bytes > 0, JSON.stringify(snap));
  assert.equal((await running).stdout, 'still-ran\n');
  // The image holds none of the server's files: the helper's /.msc (its socket, its lease) and
  // /.msc-helper are mounts, left out of a commit; they are empty mount points in the image.
  const ref = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.id=${snap.snapshot_id}`])).stdout.trim();
  assert.match(ref, /^[0-9a-f]{12}$/, 'one image');
  const inImage = await docker(['run', '--rm', '--label', `msc.snap-test=${RUN}`, '--network', 'none', '--entrypoint', '/bin/sh', ref,
    '-c', 'ls -A /.msc; wc -c < /.msc-helper']);
  assert.equal(inImage.stdout, '0\n', `the image's /.msc and /.msc-helper: ${inImage.stdout}${inImage.stderr}`);

  const listed = await ok(c, 'snapshot_list', {});
  const row = listed.snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(row, JSON.stringify(listed));
  assert.equal(row.computer_id, id);
  assert.match(row.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(row.size_bytes >= row.own_bytes);

  await sh(c, 'echo two > /root/state.txt; touch /root/later', { computer_id: id });
  const back = await ok(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
  assert.equal(back.computer_id, id);
  assert.equal(back.temporary, true);
  assert.equal((await sh(c, 'cat /root/state.txt; test -e /root/later || echo gone', { computer_id: id })).stdout,
    'one\ngone\n', 'the old content, the later file gone');

  // Five forks at once, each its own id; each sees the snapshot's file; their changes stay theirs.
  const t0 = Date.now();
  const forks = await ok(c, 'computer_create', { from_snapshot: snap.snapshot_id, count: 5 });
  const forkMs = Date.now() - t0;
  assert.equal(forks.count, 5);
  const ids = forks.computers.map((f) => f.computer_id);
  assert.equal(new Set(ids).size, 5, JSON.stringify(ids));
  assert.ok(!ids.includes(id));
  for (const f of ids) {
    assert.equal((await sh(c, 'cat /root/state.txt', { computer_id: f })).stdout, 'one\n');
    await sh(c, `echo mine-${f} > /root/state.txt`, { computer_id: f });
  }
  for (const f of ids)
    assert.equal((await sh(c, 'cat /root/state.txt', { computer_id: f })).stdout, `mine-${f}\n`);
  assert.equal((await sh(c, 'cat /root/state.txt', { computer_id: id })).stdout, 'one\n');
  // The fast exec helper serves the forks (no fall back to the Engine API's exec).
  assert.doesNotMatch(c.box.text, /fast exec off/);
  // No fork is a spare of the warm pool, and no proxy variable came with the image.
  const ctr = (await docker(['inspect', `kilntainer-${ids[0]}`])).stdout;
  const labels = JSON.parse(ctr)[0].Config.Labels;
  assert.equal(labels['kilntainers.snapshot.id'], snap.snapshot_id);
  assert.ok(!labels['kilntainers.pool'], JSON.stringify(labels));
  process.stderr.write(`5 forks in ${forkMs} ms\n`);

  // A snapshot in use by computers is not deleted; once they are gone it is.
  await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /in use/);
  for (const f of ids) await ok(c, 'computer_delete', { computer_id: f });
  await ok(c, 'computer_delete', { computer_id: id });
  await waitFor(async () => (await docker(['ps', '-aq', '--filter', `label=kilntainers.snapshot.id=${snap.snapshot_id}`])).stdout.trim() === '',
    { timeoutMs: 20000 });
  const del = await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  assert.equal(del.deleted, true);
  await refused(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  assert.equal((await ok(c, 'snapshot_list', {})).count, 0);
});

// go_busybox keeps snapshots too: snapshots_wasm.test.mjs.

test('bad input: crafted and unknown ids, counts, names, from_snapshot with a computer_id; the quota', async () => {
  const c = await stdioV1(['--max-snapshots', '1']);
  const made = await ok(c, 'computer_create', {});
  const id = made.computer_id;
  const unknown = `snap-${'0'.repeat(32)}`;
  // Refused before any engine sees them (an empty from_snapshot is no snapshot, as the reference
  // reads empty strings: a plain computer).
  for (const bad of ['../../etc/passwd', 'snap-/../x', `snap-${'a'.repeat(10240)}`, 'SNAP-' + 'A'.repeat(32), 'snap-abc', '',
    `snap-${'0'.repeat(32)}/json`, `snap-${'0'.repeat(32)}%2F..`]) {
    await refused(c, 'computer_restore', { computer_id: id, snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    await refused(c, 'snapshot_delete', { snapshot_id: bad }, /snapshot_id must be a snapshot id/);
    if (bad !== '') await refused(c, 'computer_create', { from_snapshot: bad }, /snapshot_id must be a snapshot id/);
  }
  await refused(c, 'computer_restore', { computer_id: id, snapshot_id: `snap-${'0'.repeat(32)}\u0000x` }, /NUL/);
  await refused(c, 'computer_restore', { computer_id: id, snapshot_id: unknown }, /Snapshot 'snap-0+' was not found/);
  await refused(c, 'snapshot_delete', { snapshot_id: unknown }, /was not found/);
  await refused(c, 'computer_create', { from_snapshot: unknown }, /was not found/);
  await refused(c, 'computer_restore', { computer_id: id }, /snapshot_id: Field required/);
  await refused(c, 'computer_snapshot', {}, /computer_id: Field required/);
  await refused(c, 'computer_snapshot', { computer_id: id, name: 'x'.repeat(65) }, /name must be at most 64/);
  await refused(c, 'computer_snapshot', { computer_id: id, name: 'a/b' }, /name must be at most 64/);
  await refused(c, 'computer_snapshot', { computer_id: 'no-such-computer' }, /not found/);
  for (const count of [0, -1, 10000, 1.5, '3'])
    await refused(c, 'computer_create', { from_snapshot: unknown, count }, /count: must be a whole number from 1 to 64/);
  await refused(c, 'computer_create', { count: 2 }, /pass from_snapshot/);
  await refused(c, 'computer_create', { from_snapshot: unknown, computer_id: 'given-id' }, /leave computer_id out/);

  // --max-snapshots 1: a second is refused, with nothing made; a delete makes room.
  const s1 = await ok(c, 'computer_snapshot', { computer_id: id });
  const before = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${RUN}`])).stdout.trim().split(/\s+/).length;
  await refused(c, 'computer_snapshot', { computer_id: id }, /at most 1 snapshots \(--max-snapshots\)/);
  const afterN = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${RUN}`])).stdout.trim().split(/\s+/).length;
  assert.equal(afterN, before, 'no image made by the refused snapshot');
  // More forks than the session's share are refused before any is made.
  await refused(c, 'computer_create', { from_snapshot: s1.snapshot_id, count: 64 }, /--max-session-computers/);
  await ok(c, 'snapshot_delete', { snapshot_id: s1.snapshot_id });
  const s2 = await ok(c, 'computer_snapshot', { computer_id: id });
  await ok(c, 'snapshot_delete', { snapshot_id: s2.snapshot_id });

  // A snapshot during a factory reset, and one during a delete: each is made or refused with a
  // clear error, and a refused one leaves no image behind.
  const images = async () => (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${RUN}`])).stdout.trim();
  const during = async (other) => {
    const [snap, op] = await Promise.all([call(c, 'computer_snapshot', { computer_id: id }), call(c, other, { computer_id: id })]);
    assert.equal(op.isError, false, JSON.stringify(op));
    if (snap.isError) {
      assert.match(snap.content[0].text, /was not found|was reset or deleted while its snapshot was taken: nothing was saved/, snap.content[0].text);
      assert.equal(await images(), '', 'a refused snapshot leaves no image');
    } else {
      assert.equal((await images()).split(/\s+/).length, 1);
      await ok(c, 'snapshot_delete', { snapshot_id: snap.structuredContent.snapshot_id });
    }
  };
  await during('computer_factory_reset');
  await during('computer_delete');
  assert.equal(await images(), '');
});

test('HTTP: another principal\'s snapshot is refused in both eras; a restarted server finds them again; --share-snapshots shares use, not deletion', async () => {
  let srv = await startHttp();
  // 2025: alice's session makes a snapshot.
  const a1 = await v1Http(srv.url, 'alice');
  const comp = (await ok(a1, 'computer_create', {})).computer_id;
  await sh(a1, 'echo alice-data > /root/a.txt', { computer_id: comp });
  const snap = await ok(a1, 'computer_snapshot', { computer_id: comp, name: 'alice' });

  // 2025: bob neither sees nor uses it.
  const b1 = await v1Http(srv.url, 'bob');
  const bcomp = (await ok(b1, 'computer_create', {})).computer_id;
  assert.ok(!(await ok(b1, 'snapshot_list', {})).snapshots.some((s) => s.snapshot_id === snap.snapshot_id));
  await refused(b1, 'computer_restore', { computer_id: bcomp, snapshot_id: snap.snapshot_id }, /was not found/);
  await refused(b1, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  await refused(b1, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  // Nor snapshots alice's temporary computer.
  await refused(b1, 'computer_snapshot', { computer_id: comp }, /not owned|not found/);
  // Nor her permanent one by its name, nor restores his own snapshot over it.
  const perm = `${RUN}-alice`;
  await sh(a1, 'echo alice-perm > /root/p.txt', { computer_id: perm, temporary: false });
  await refused(b1, 'computer_snapshot', { computer_id: perm, temporary: false }, /belongs to another principal/);
  const bsnap = await ok(b1, 'computer_snapshot', { computer_id: bcomp, name: 'bob' });
  await refused(b1, 'computer_restore', { computer_id: perm, temporary: false, snapshot_id: bsnap.snapshot_id }, /belongs to another principal/);
  assert.equal((await sh(a1, 'cat /root/p.txt', { computer_id: perm, temporary: false })).stdout, 'alice-perm\n');
  await ok(b1, 'snapshot_delete', { snapshot_id: bsnap.snapshot_id });
  await ok(a1, 'computer_delete', { computer_id: perm, temporary: false });

  // 2026-07-28: bob's handle is refused the same way; alice's handle forks it.
  const b2 = await v2Http(srv.url, 'bob');
  const bh = await ok(b2, 'terminal_execute', { command: 'true' });
  assert.ok(bh.sandbox_handle);
  await refused(b2, 'computer_restore', { computer_id: bh.computer_id, snapshot_id: snap.snapshot_id, sandbox_handle: bh.sandbox_handle }, /was not found/);
  await refused(b2, 'computer_create', { from_snapshot: snap.snapshot_id }, /was not found/);
  assert.ok(!(await ok(b2, 'snapshot_list', { sandbox_handle: bh.sandbox_handle })).snapshots.some((s) => s.snapshot_id === snap.snapshot_id));
  const a2 = await v2Http(srv.url, 'alice');
  const fork = await ok(a2, 'computer_create', { from_snapshot: snap.snapshot_id });
  assert.ok(fork.sandbox_handle, JSON.stringify(fork));
  assert.equal((await ok(a2, 'terminal_execute', { command: 'cat /root/a.txt', sandbox_handle: fork.sandbox_handle })).stdout, 'alice-data\n');
  await ok(a2, 'computer_release', { sandbox_handle: fork.sandbox_handle });
  await ok(b2, 'computer_release', { sandbox_handle: bh.sandbox_handle });

  // A restarted server finds the snapshot again from the image's labels.
  await a1.close(); await b1.close(); await a2.close(); await b2.close();
  await stop(srv);
  srv = await startHttp(['--share-snapshots']);
  const a3 = await v1Http(srv.url, 'alice');
  const again = (await ok(a3, 'snapshot_list', {})).snapshots.find((s) => s.snapshot_id === snap.snapshot_id);
  assert.ok(again, 'found again after the restart');
  assert.equal(again.name, 'alice');
  // Its maker as a tag of the principal's name, never the name itself.
  assert.match(again.made_by, /^[0-9a-f]{32}$/);
  // Shared: bob lists and forks it, but may not delete it.
  const b3 = await v1Http(srv.url, 'bob');
  assert.ok((await ok(b3, 'snapshot_list', {})).snapshots.some((s) => s.snapshot_id === snap.snapshot_id));
  const bf = await ok(b3, 'computer_create', { from_snapshot: snap.snapshot_id, count: 2 });
  assert.equal(bf.count, 2);
  assert.equal((await sh(b3, 'cat /root/a.txt', { computer_id: bf.computers[1].computer_id })).stdout, 'alice-data\n');
  await refused(b3, 'snapshot_delete', { snapshot_id: snap.snapshot_id }, /was not found/);
  for (const f of bf.computers) await ok(b3, 'computer_delete', { computer_id: f.computer_id });
  await ok(a3, 'computer_delete', { computer_id: comp }).catch(() => {});
  await waitFor(async () => (await docker(['ps', '-aq', '--filter', `label=kilntainers.snapshot.id=${snap.snapshot_id}`])).stdout.trim() === '',
    { timeoutMs: 20000 });
  await ok(a3, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  await stop(srv);
});

test('race: a snapshot_delete during a computer_restore never loses the computer (the restore pins its image)', async () => {
  const c = await stdioV1();
  const id = (await ok(c, 'computer_create', {})).computer_id;
  await sh(c, 'echo base > /root/data.txt', { computer_id: id });
  const outcomes = new Set();
  for (let round = 0; round < 2; round++) {
    const snap = await ok(c, 'computer_snapshot', { computer_id: id });
    await sh(c, `echo round-${round} > /root/data.txt`, { computer_id: id });
    // The delete is sent while the restore runs (it inspects the image, then removes the
    // container and creates the new one from the image).
    const restore = call(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
    await sleep(round * 60);
    const del = await call(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
    const r = await restore;
    const computers = (await ok(c, 'computer_list', {})).computers.map((x) => x.computer_id);
    assert.ok(computers.includes(id), `round ${round}: the computer is gone (restore: ${JSON.stringify(r.content)}, delete: ${JSON.stringify(del.content)})`);
    const data = (await sh(c, 'cat /root/data.txt', { computer_id: id })).stdout;
    if (r.isError) {
      assert.match(r.content[0].text, /was not found/);
      assert.equal(data, `round-${round}\n`, 'a refused restore changed nothing');
      await sh(c, 'echo base > /root/data.txt', { computer_id: id });
    } else assert.equal(data, 'base\n');
    if (del.isError) {
      assert.match(del.content[0].text, /is in use/);
      outcomes.add('delete refused');
      await ok(c, 'computer_factory_reset', { computer_id: id });
      await sh(c, 'echo base > /root/data.txt', { computer_id: id });
      await ok(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
    } else outcomes.add(r.isError ? 'delete first' : 'restore first');
  }
  process.stderr.write(`restore/delete race outcomes: ${[...outcomes].join(', ')}\n`);
  // The image removed behind the server's back (docker rmi, no pin stops it) while a restore
  // runs: a restore that cannot make its new container makes the computer again from the
  // configured image, never leaving it gone.
  const seen = new Set();
  for (let round = 0; round < 2; round++) {
    const snap = await ok(c, 'computer_snapshot', { computer_id: id });
    const img = (await docker(['images', '-q', '--filter', `label=kilntainers.snapshot.id=${snap.snapshot_id}`])).stdout.trim();
    await sh(c, `echo round-${round} > /root/data.txt`, { computer_id: id });
    const restore = call(c, 'computer_restore', { computer_id: id, snapshot_id: snap.snapshot_id });
    await sleep(round * 80);
    await docker(['rmi', '-f', img]);
    const r = await restore;
    const data = await ok(c, 'terminal_execute', { command: 'cat /root/data.txt 2>/dev/null || echo none', computer_id: id });
    if (!r.isError) { seen.add('restored'); assert.equal(data.stdout, 'base\n'); } else if (/factory reset instead/.test(r.content[0].text)) {
      seen.add('reset'); assert.equal(data.stdout, 'none\n');
    } else { seen.add('refused'); assert.match(r.content[0].text, /was not found/); assert.equal(data.stdout, `round-${round}\n`); }
    await ok(c, 'computer_factory_reset', { computer_id: id });
    await sh(c, 'echo base > /root/data.txt', { computer_id: id });
    await call(c, 'snapshot_delete', { snapshot_id: snap.snapshot_id });
  }
  process.stderr.write(`restore/rmi race outcomes: ${[...seen].join(', ')}\n`);
  await ok(c, 'computer_delete', { computer_id: id });
  await c.close();
});
