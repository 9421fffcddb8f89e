// computer_upload and computer_download (issue 29, --tools files): a local file or folder into a
// computer and back, through the official SDK: over stdio with the client's MCP roots (2025) and
// with --workspace, over HTTP with --workspace (2025 sessions and 2026-07-28 handles). Round trips
// are byte-identical with modes kept; local paths outside the roots, "..", a symlink out of them, a
// computer's symlink to /proc, HTTP without --workspace and another agent's computer are refused.
// Containers carry the label msc.copy-test=<run> and are removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { MSC_BIN, ENGINE, docker, waitFor, waitExit, sleep, startServer, freePort } from './lib.mjs';
import { call, ok, refused, sha } from './tool_calls.mjs';

const RUN = `copy${randomBytes(3).toString('hex')}`;
const FLAGS = [`--docker-run-flag=--label=msc.copy-test=${RUN}`, '--tools', 'files', '--driver-id', RUN, '--warm-pool', '0',
  ...(ENGINE === 'podman' ? ['--engine', 'podman'] : [])];

// This run's own helper folder (the computers run this build's exec helper), and local folders:
// ROOT the client's root, WS the server's workspace, OUT outside both.
const TMP = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'msc-copy-test-')));
const ENV = { ...process.env, MSC_FAST_EXEC_DIR: path.join(TMP, 'fx') };
delete ENV.KILNTAINERS_AUTH_TOKEN;
delete ENV.KILNTAINERS_WORKSPACE;
const ROOT = path.join(TMP, 'root');
const WS = path.join(TMP, 'ws');
const OUT = path.join(TMP, 'out');
for (const d of [ROOT, WS, OUT]) fs.mkdirSync(d);

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
  await sleep(500);
  const bad = stderrs.find((b) => SANITIZER_RE.test(b.text));
  if (bad) { process.stderr.write(`sanitizer report:\n${bad.text.slice(-5000)}\n`); process.exitCode = 1; }
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.copy-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
  fs.chmodSync(TMP, 0o700);
  for (const dir of walkDirs(TMP)) fs.chmodSync(dir, 0o700);
  fs.rmSync(TMP, { recursive: true, force: true });
});

function* walkDirs(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) { const p = path.join(dir, e.name); fs.chmodSync(p, 0o700); yield p; yield* walkDirs(p); }
  }
}

async function startHttp(flags = []) {
  const port = await freePort();
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...FLAGS, ...flags],
    { stdio: ['ignore', 'ignore', 'pipe'], env: ENV });
  procs.add(proc);
  watch(proc.stderr);
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, 'server not ready');
  return `http://127.0.0.1:${port}/mcp`;
}

// A 2025 stdio client; with `roots`, it declares the capability and answers roots/list.
async function stdioV1(flags = [], roots = null) {
  const t = new StdioV1({ command: MSC_BIN, args: [...FLAGS, ...flags], stderr: 'pipe', env: ENV });
  watch(t.stderr);
  const c = new ClientV1({ name: 'copy-test', version: '1' }, { capabilities: roots ? { roots: { listChanged: true } } : {} });
  if (roots) {
    roots.asked = 0;
    c.setRequestHandler(ListRootsRequestSchema, async () => {
      roots.asked++;
      return { roots: roots.list.map((p) => ({ uri: `file://${p}` })) };
    });
  }
  clients.add(c);
  await c.connect(t);
  if (roots) await rootsAnswered(c, roots, 1);
  return c;
}

// Waits until the client answered roots/list `n` times; a round trip after it means the server
// read the answer (one stdin, in order).
async function rootsAnswered(c, roots, n) {
  assert.ok(await waitFor(() => roots.asked >= n, { timeoutMs: 10000, intervalMs: 20 }), 'roots/list was asked');
  await sleep(50);
  await c.listTools();
}

async function v1Http(url) {
  const c = new ClientV1({ name: 'copy-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}

async function v2Http(url) {
  const c = new ClientV2({ name: 'copy-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}


// A tree with text, binary (3 MiB: two upload batches, four download parts), an empty file, an
// executable, a read-only folder, a nested folder and a relative symlink.
function makeTree(dir) {
  fs.mkdirSync(path.join(dir, 'sub', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'a.txt'), 'hello $USER "quotes" \'and\' `ticks`\nline 2\n');
  fs.writeFileSync(path.join(dir, 'bin.dat'), randomBytes(3 * 1024 * 1024 + 17));
  fs.writeFileSync(path.join(dir, 'empty'), '');
  fs.writeFileSync(path.join(dir, 'sub', 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'sub', 'deep', 'name with\nnewline'), 'x');
  fs.mkdirSync(path.join(dir, 'ro'));
  fs.writeFileSync(path.join(dir, 'ro', 'f'), 'read-only folder', { mode: 0o600 });
  fs.chmodSync(path.join(dir, 'ro'), 0o555);
  fs.symlinkSync('a.txt', path.join(dir, 'link'));
}

// path -> [kind, mode, sha or link] for every entry below dir.
function snapshot(dir) {
  const out = {};
  const walk = (d, rel) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name), r = rel ? `${rel}/${name}` : name, st = fs.lstatSync(p);
      if (st.isSymbolicLink()) out[r] = ['link', fs.readlinkSync(p)];
      else if (st.isDirectory()) { out[r] = ['dir', st.mode & 0o7777]; walk(p, r); }
      else out[r] = ['file', st.mode & 0o7777, sha(fs.readFileSync(p))];
    }
  };
  walk(dir, '');
  return out;
}

test('stdio with the client\'s roots: a folder and a file round trip, byte-identical, modes kept; the refusals', async () => {
  const src = path.join(ROOT, 'src');
  fs.mkdirSync(src);
  makeTree(src);
  const roots = { list: [ROOT] };
  const c = await stdioV1([], roots);
  const names = (await c.listTools()).tools.map((t) => t.name);
  assert.ok(names.includes('computer_upload') && names.includes('computer_download'), names.join());

  const up = await ok(c, 'computer_upload', { local_path: src, path: '/work/src' });
  assert.equal(up.files, 6);
  assert.equal(up.folders, 4);
  assert.equal(up.symlinks, 1);
  assert.equal(up.bytes, fs.statSync(path.join(src, 'bin.dat')).size + 42 + 18 + 1 + 16);
  assert.match(up.summary, /Copied 6 files, 4 folders and 1 symlink/);
  // inside the computer: the bytes and the modes
  const inside = (await ok(c, 'terminal_execute', { command: 'cd /work/src && sha256sum bin.dat a.txt && stat -c "%a %n" ro sub/run.sh ro/f && readlink link' })).stdout;
  assert.ok(inside.includes(sha(fs.readFileSync(path.join(src, 'bin.dat')))), inside);
  assert.match(inside, /^555 ro$/m);
  assert.match(inside, /^755 sub\/run.sh$/m);
  assert.match(inside, /^600 ro\/f$/m);
  assert.match(inside, /^a\.txt$/m);

  const down = await ok(c, 'computer_download', { path: '/work/src', local_path: path.join(ROOT, 'back') });
  assert.equal(down.files, 6);
  assert.deepEqual(snapshot(path.join(ROOT, 'back')), snapshot(src));

  // one file each way, under another name
  await ok(c, 'computer_upload', { local_path: path.join(src, 'bin.dat'), path: 'copies/one.bin' });
  const one = await ok(c, 'computer_download', { path: 'copies/one.bin', local_path: path.join(ROOT, 'one.bin') });
  assert.equal(one.files, 1);
  assert.ok(fs.readFileSync(path.join(ROOT, 'one.bin')).equals(fs.readFileSync(path.join(src, 'bin.dat'))));

  // refused: outside the roots, "..", a symlink out of them (both ways); nothing written outside
  fs.writeFileSync(path.join(OUT, 'secret'), 'host secret');
  await refused(c, 'computer_upload', { local_path: path.join(OUT, 'secret'), path: '/tmp/s' }, /outside the folders this server may use/);
  await refused(c, 'computer_upload', { local_path: `${ROOT}/../out/secret`, path: '/tmp/s' }, /"\.\." is not allowed/);
  await refused(c, 'computer_upload', { local_path: 'relative', path: '/tmp/s' }, /must be absolute/);
  fs.symlinkSync(OUT, path.join(ROOT, 'escape'));
  await refused(c, 'computer_upload', { local_path: path.join(ROOT, 'escape', 'secret'), path: '/tmp/s' }, /a symlink on the way leads outside/);
  await refused(c, 'computer_download', { path: '/work/src/a.txt', local_path: path.join(ROOT, 'escape', 'planted') }, /a symlink on the way leads outside/);
  fs.symlinkSync(path.join(OUT, 'target'), path.join(ROOT, 'dangling'));
  await refused(c, 'computer_download', { path: '/work/src/a.txt', local_path: path.join(ROOT, 'dangling') }, /symlink/);
  assert.deepEqual(fs.readdirSync(OUT), ['secret']);
  assert.match((await ok(c, 'terminal_execute', { command: 'cat /tmp/s' })).stderr, /No such file/);

  // the computer's symlinks to /proc: refused as the path, left out below it
  await ok(c, 'terminal_execute', { command: 'mkdir -p /work/d && echo in > /work/d/f && ln -s /proc/self /work/procl && ln -s /proc /work/d/p && ln -s ../../etc/passwd /work/d/up' });
  await refused(c, 'computer_download', { path: '/work/procl', local_path: path.join(ROOT, 'procl') }, /refused: the path is in \/proc/);
  const d = await ok(c, 'computer_download', { path: '/work/d', local_path: path.join(ROOT, 'd') });
  assert.equal(d.skipped, 2);
  assert.deepEqual(fs.readdirSync(path.join(ROOT, 'd')), ['f']);
  assert.equal(fs.existsSync(path.join(ROOT, 'procl')), false);

  // the roots change: the old folder is no longer allowed
  roots.list = [WS];
  await c.notification({ method: 'notifications/roots/list_changed' });
  await rootsAnswered(c, roots, 2);
  await refused(c, 'computer_upload', { local_path: path.join(src, 'a.txt'), path: '/tmp/a' }, /outside the folders/);
  await c.close();
});

test('stdio with the client\'s roots: a root withdrawn while a download runs stops it', async () => {
  // 32 KiB parts (--output-limit 64 KiB): a 32 MiB file takes 1024 steps, the withdrawal comes
  // during them; the copy stops at the next step, not after writing into the withdrawn folder.
  const roots = { list: [ROOT] };
  const c = await stdioV1(['--output-limit', '65536'], roots);
  const size = 32 * 1024 * 1024;
  await ok(c, 'terminal_execute', { command: `head -c ${size} /dev/urandom > /tmp/big` });
  const local = path.join(ROOT, 'withdrawn.bin');
  let done = null;
  const running = call(c, 'computer_download', { path: '/tmp/big', local_path: local }).then((r) => { done = r; return r; });
  assert.ok(await waitFor(() => done !== null || (fs.existsSync(local) && fs.statSync(local).size > 0), { timeoutMs: 60000, intervalMs: 10 }), 'the download started');
  assert.equal(done, null, `the download ran to its end first: ${JSON.stringify(done).slice(0, 500)}`);
  roots.list = [WS];
  await c.notification({ method: 'notifications/roots/list_changed' });
  const res = await running;
  assert.equal(res.isError, true, JSON.stringify(res).slice(0, 500));
  assert.match(res.content[0].text, /withdrew the MCP root|roots changed during the copy/);
  assert.ok(fs.statSync(local).size < size, 'stopped before the end');
  await c.close();
});

test('stdio with --workspace (no roots): relative local paths, a 1000-file folder', async () => {
  const many = path.join(WS, 'many');
  for (let i = 0; i < 10; i++) {
    fs.mkdirSync(path.join(many, `d${i}`), { recursive: true });
    for (let j = 0; j < 100; j++) fs.writeFileSync(path.join(many, `d${i}`, `f${j}`), `${i}-${j}\n`);
  }
  const c = await stdioV1(['--workspace', WS]);
  const up = await ok(c, 'computer_upload', { local_path: 'many', path: '/work/many' });
  assert.equal(up.files, 1000);
  assert.equal((await ok(c, 'terminal_execute', { command: 'find /work/many -type f | wc -l' })).stdout.trim(), '1000');
  await ok(c, 'computer_download', { path: '/work/many', local_path: 'many-back' });
  assert.deepEqual(snapshot(path.join(WS, 'many-back')), snapshot(many));
  await refused(c, 'computer_upload', { local_path: path.join(ROOT, 'src', 'a.txt'), path: '/tmp/a' }, /outside the folders/);
  await c.close();
});

test('stdio at 2026-07-28: no roots are asked, --workspace only', async () => {
  const start = async (flags) => {
    const t = new StdioV2({ command: MSC_BIN, args: [...FLAGS, ...flags], stderr: 'pipe', env: ENV });
    watch(t.stderr);
    const c = new ClientV2({ name: 'copy-test', version: '1' }, { capabilities: { roots: { listChanged: true } }, versionNegotiation: { mode: 'auto' } });
    clients.add(c);
    await c.connect(t);
    assert.equal(c.getNegotiatedProtocolVersion(), '2026-07-28');
    return c;
  };
  fs.writeFileSync(path.join(WS, 'modern.txt'), 'modern\n');
  const bare = await start([]);
  await refused(bare, 'computer_upload', { local_path: path.join(WS, 'modern.txt'), path: '/tmp/m' }, /2026-07-28 the server asks the client for no MCP roots/);
  await bare.close();
  const c = await start(['--workspace', WS]);
  const up = await ok(c, 'computer_upload', { local_path: 'modern.txt', path: '/tmp/m.txt' });
  await ok(c, 'computer_download', { sandbox_handle: up.sandbox_handle, path: '/tmp/m.txt', local_path: 'modern-back.txt' });
  assert.equal(fs.readFileSync(path.join(WS, 'modern-back.txt'), 'utf8'), 'modern\n');
  await refused(c, 'computer_upload', { local_path: path.join(ROOT, 'x'), path: '/tmp/x' }, /outside the folders/);
  await c.close();
});

test('HTTP: only with --workspace; 2025 sessions and 2026 handles; another agent is refused', async () => {
  fs.mkdirSync(path.join(WS, 'small', 'x'), { recursive: true });
  fs.writeFileSync(path.join(WS, 'small', 'x', 'f.bin'), Buffer.from([0, 1, 2, 255, 10, 13]));
  fs.chmodSync(path.join(WS, 'small', 'x', 'f.bin'), 0o640);

  const bare = await v1Http(await startHttp());
  await refused(bare, 'computer_upload', { local_path: path.join(WS, 'small'), path: '/tmp/s' }, /over HTTP need the server's --workspace/);

  const url = await startHttp(['--workspace', WS]);
  const victim = await v1Http(url);
  const thief = await v1Http(url);
  const id = `${RUN}-victim`;
  await ok(victim, 'computer_upload', { computer_id: id, local_path: path.join(WS, 'small'), path: '/tmp/small' });
  await ok(victim, 'computer_download', { computer_id: id, path: '/tmp/small', local_path: path.join(WS, 'small-back') });
  assert.deepEqual(snapshot(path.join(WS, 'small-back')), snapshot(path.join(WS, 'small')));
  const r = await call(thief, 'computer_download', { computer_id: id, path: '/tmp/small', local_path: path.join(WS, 'stolen') });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /Temporary computer already has an active sandbox_handle/);
  assert.equal(fs.existsSync(path.join(WS, 'stolen')), false);
  await refused(thief, 'computer_upload', { computer_id: id, local_path: path.join(WS, 'small'), path: '/tmp/planted' }, /Temporary computer already has an active sandbox_handle/);

  // 2026-07-28: the first call mints a handle; the next ones name it; another handle is refused
  const modern = await v2Http(url);
  const mine = await ok(modern, 'computer_upload', { local_path: 'small', path: '/tmp/m' });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  await ok(modern, 'computer_download', { sandbox_handle: mine.sandbox_handle, path: '/tmp/m', local_path: 'm-back' });
  assert.deepEqual(snapshot(path.join(WS, 'm-back')), snapshot(path.join(WS, 'small')));
  await refused(modern, 'computer_download', { sandbox_handle: 'a'.repeat(43), path: '/tmp/m', local_path: 'nope' }, /Unknown or expired sandbox_handle/);
  await refused(modern, 'computer_download', { sandbox_handle: mine.sandbox_handle, computer_id: id, path: '/tmp/small', local_path: 'nope' }, /computer_id does not match sandbox_handle/);
  const cross = await call(victim, 'computer_download', { computer_id: mine.computer_id, path: '/tmp/m', local_path: path.join(WS, 'nope') });
  assert.equal(cross.isError, true);
  assert.equal(fs.existsSync(path.join(WS, 'nope')), false);
  assert.match((await ok(victim, 'terminal_execute', { computer_id: id, command: 'ls /tmp/planted' })).stderr, /No such file/);
});

test('go_busybox: the runner unpacks and packs on the host side, in the computer\'s root', async () => {
  const state = fs.mkdtempSync(path.join(TMP, 'wasm-'));
  const outside = path.join(state, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret\n');
  const src = path.join(WS, 'wsrc');
  fs.mkdirSync(src);
  makeTree(src);
  const s = await startServer(['--backend', 'go_busybox', '--tools', 'files', '--workspace', WS],
    { env: { KILNTAINERS_WASM_DIR: state, HOME: state } });
  const c = s.client;
  try {
    const up = await ok(c, 'computer_upload', { local_path: 'wsrc', path: '/work/src' });
    assert.equal(up.files, 6);
    const id = up.computer_id;
    const root = path.join(state, 'go_busybox', id, 'root');
    assert.deepEqual(snapshot(path.join(root, 'work', 'src')), snapshot(src));
    await ok(c, 'computer_download', { path: '/work/src', local_path: 'wback' });
    assert.deepEqual(snapshot(path.join(WS, 'wback')), snapshot(src));
    // symlinks planted from the host toward it: resolved in the root, or left out
    fs.symlinkSync(outside, path.join(root, 'work', 'src', 'host'));
    fs.symlinkSync('../../../../outside', path.join(root, 'work', 'up'));
    const d = await ok(c, 'computer_download', { path: '/work/src', local_path: 'wback2' });
    assert.equal(d.skipped, 1);
    assert.equal(fs.existsSync(path.join(WS, 'wback2', 'host')), false);
    await refused(c, 'computer_download', { path: '/work/up/secret.txt', local_path: 'stolen' }, /no such file|does not exist|missing/i);
    await call(c, 'computer_upload', { local_path: 'wsrc/a.txt', path: '/work/src/host/planted' });
    assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
    assert.equal(fs.existsSync(path.join(WS, 'stolen')), false);
  } finally {
    await s.close();
  }
  // a small --output-limit: the download comes in parts within it
  const small = await startServer(['--backend', 'go_busybox', '--tools', 'files', '--workspace', WS, '--output-limit', '200000'],
    { env: { KILNTAINERS_WASM_DIR: state, HOME: state } });
  try {
    await ok(small.client, 'computer_upload', { local_path: 'wsrc', path: '/work/src' });
    await ok(small.client, 'computer_download', { path: '/work/src', local_path: 'wback3' });
    assert.deepEqual(snapshot(path.join(WS, 'wback3')), snapshot(src));
  } finally {
    await small.close();
  }
});
