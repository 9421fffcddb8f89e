// Background processes (issue 28) and the file tools (issue 29) on the modal backend, against the
// local fake of Modal (fake_modal.py, real Docker containers behind its command router): the
// driver copies the exec helper into the sandbox (a command with the binary on its stdin) and runs
// its modes there. Through the official SDK over stdio (2025) and HTTP (2025 sessions, 2026 handles).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, statSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, ClientV2, HttpV1, HttpV2, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor, waitExit, freePort } from '../integration/lib.mjs';
import { call, ok, sha } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PY = process.env.MODAL_FAKE_PYTHON || 'python3';
const RND = randomBytes(6).toString('hex');
const TOKEN_ID = `ak-fake${RND}`;
const TOKEN_SECRET = `as-fake${RND}`;
const TMP = mkdtempSync(path.join(os.tmpdir(), 'msc-modal-tools-'));
const TOOLS = ['--backend', 'modal', '--tools', 'processes,files,lifecycle'];
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
let fake;
let api;
const procs = new Set();
const clients = new Set();
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); };
const env = () => ({
  ...process.env, MODAL_SERVER_URL: api, MODAL_TOKEN_ID: TOKEN_ID, MODAL_TOKEN_SECRET: TOKEN_SECRET,
  MODAL_CONFIG_PATH: path.join(TMP, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '',
});

before(async () => {
  ({ proc: fake, api } = await new Promise((resolve, reject) => {
    const p = spawn(PY, [path.join(HERE, 'fake_modal.py'), '--token-id', TOKEN_ID, '--token-secret', TOKEN_SECRET],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => { out += c; const m = /PORTS (\d+) (\d+) (\d+)/.exec(out); if (m) resolve({ proc: p, api: `http://127.0.0.1:${m[1]}` }); });
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
  fake?.kill('SIGTERM');   // the fake removes its containers
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  rmSync(TMP, { recursive: true, force: true });
});

async function stdio() {
  const t = new StdioV1({ command: MSC_BIN, args: TOOLS, stderr: 'pipe', env: env() });
  watch(t.stderr);
  const c = new ClientV1({ name: 'modal-tools-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} refused: ${JSON.stringify(res)}`);
  assert.match(res.content[0].text, re);
  return res;
}
const COUNT_SLEEPS = `n=0; for p in /proc/[0-9]*; do case "$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)" in "sleep 30"[01]*) n=$((n+1));; esac; done; echo $n`;
const sh = async (c, command) => (await ok(c, 'terminal_execute', { command })).stdout;

test('modal: a background process is read with a pattern wait, listed, killed with its group; files round-trip and follow the edit rules', async () => {
  const c = await stdio();
  const p = await ok(c, 'terminal_execute', { command: 'sleep 1; echo ready; (sleep 300 &); exec sleep 301', background: true });
  const r = await ok(c, 'process_output', { process_id: p.process_id, wait_ms: 20000, pattern: '^ready' });
  assert.match(r.output, /ready/);
  assert.equal(r.state, 'running');
  const l = await ok(c, 'process_list', {});
  assert.equal(l.processes.find((x) => x.process_id === p.process_id).state, 'running');
  const k = await ok(c, 'process_kill', { process_id: p.process_id, signal: 'KILL' });
  assert.equal(k.state, 'killed');
  assert.equal((await sh(c, COUNT_SLEEPS)).trim(), '0', 'the kill ended the whole group');
  const q = await ok(c, 'terminal_execute', { command: 'echo out; echo err >&2; exit 3', background: true });
  const qo = await ok(c, 'process_output', { process_id: q.process_id, wait_ms: 10000 });
  assert.deepEqual([qo.state, qo.exit_code], ['exited', 3]);
  assert.match(qo.output, /out\n/);
  assert.match(qo.output, /err\n/);

  const text = `quotes ' " \` $HOME $(id) \\ back\n\u00e9\u4e16\u{1f600}\r\nend`;
  const w = await ok(c, 'file_write', { path: '/tmp/m/a.txt', content: text, make_dirs: true });
  assert.deepEqual([w.size, w.sha256], [Buffer.byteLength(text), sha(text)]);
  const rd = await ok(c, 'file_read', { path: '/tmp/m/a.txt' });
  assert.deepEqual([rd.content, rd.sha256], [text, sha(text)]);
  const bytes = randomBytes(4096);
  await ok(c, 'file_write', { path: '/tmp/m/b.bin', content: bytes.toString('base64'), encoding: 'base64' });
  const rb = await call(c, 'file_read', { path: '/tmp/m/b.bin' });
  assert.ok(Buffer.from(rb.content.find((x) => x.type === 'resource').resource.blob, 'base64').equals(bytes), 'byte-identical');
  assert.equal(rb.structuredContent.sha256, sha(bytes));
  assert.equal((await sh(c, 'sha256sum /tmp/m/b.bin')).split(' ')[0], sha(bytes), 'the bytes in the sandbox');
  const e0 = await ok(c, 'file_write', { path: '/tmp/m/e.txt', content: 'x = 1\ny = 1\n' });
  await refused(c, 'file_edit', { path: '/tmp/m/e.txt', old_string: ' = 1', new_string: '=2' }, /old_string occurs 2 times in the file; nothing was changed/);
  const e1 = await ok(c, 'file_edit', { path: '/tmp/m/e.txt', old_string: 'x = 1', new_string: 'x = 2', expected_sha256: e0.sha256 });
  assert.equal(e1.sha256, sha('x = 2\ny = 1\n'));
  await refused(c, 'file_edit', { path: '/tmp/m/e.txt', old_string: 'y = 1', new_string: 'y = 2', expected_sha256: e0.sha256 }, /the file changed since it was read/);
  assert.equal(await sh(c, 'cat /tmp/m/e.txt'), 'x = 2\ny = 1\n');
  // a restart (a new sandbox from a snapshot of the filesystem) ends them and says how many
  const s3 = await ok(c, 'terminal_execute', { command: 'sleep 300', background: true });
  const rs = await ok(c, 'computer_restart', { computer_id: p.computer_id });
  assert.equal(rs.background_processes_ended, 1, JSON.stringify(rs));
  assert.equal((await ok(c, 'process_output', { process_id: s3.process_id })).state, 'killed');
  assert.equal(await sh(c, 'cat /tmp/m/e.txt'), 'x = 2\ny = 1\n', 'the files are kept');
  // a delete ends the running ones and says how many
  await ok(c, 'terminal_execute', { command: 'sleep 300', background: true });
  const del = await ok(c, 'computer_delete', { computer_id: p.computer_id });
  assert.equal(del.background_processes_ended, 1, JSON.stringify(del));
  await c.close();
});

test('modal: computer_upload and computer_download carry a folder tree both ways, bytes and modes kept', async () => {
  const ws = mkdtempSync(path.join(os.tmpdir(), 'msc-modal-ws-'));
  try {
    mkdirSync(path.join(ws, 'src', 'sub'), { recursive: true });
    const bytes = Buffer.from([...Array(256).keys()]);
    writeFileSync(path.join(ws, 'src', 'sub', 'all.bin'), bytes);
    writeFileSync(path.join(ws, 'src', 'run.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
    const t = new StdioV1({ command: MSC_BIN, args: [...TOOLS, '--workspace', ws], stderr: 'pipe', env: env() });
    watch(t.stderr);
    const c = new ClientV1({ name: 'modal-copy-test', version: '1' }, { capabilities: {} });
    clients.add(c);
    await c.connect(t);
    const up = await ok(c, 'computer_upload', { local_path: 'src', path: '/tmp/up' });
    assert.equal(up.files, 2, JSON.stringify(up));
    assert.equal(await sh(c, '/tmp/up/run.sh'), 'ran\n');
    const down = await ok(c, 'computer_download', { path: '/tmp/up', local_path: 'back' });
    assert.equal(down.files, 2, JSON.stringify(down));
    assert.ok(readFileSync(path.join(ws, 'back', 'sub', 'all.bin')).equals(bytes), 'byte-identical');
    assert.equal(statSync(path.join(ws, 'back', 'run.sh')).mode & 0o777, 0o755);
    await c.close();
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('modal attack: another agent cannot read the processes or the files of a computer it does not hold (2025 sessions and 2026 handles)', async () => {
  const port = await freePort();
  const e = env();
  delete e.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...TOOLS],
    { stdio: ['ignore', 'ignore', 'pipe'], env: e });
  procs.add(proc);
  watch(proc.stderr);
  assert.ok(await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 }), 'server not ready');
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const victim = new ClientV1({ name: 'v', version: '1' }, { capabilities: {} });
  const thief = new ClientV1({ name: 't', version: '1' }, { capabilities: {} });
  clients.add(victim); clients.add(thief);
  await victim.connect(new HttpV1(url));
  await thief.connect(new HttpV1(url));
  const id = `mt${RND}-victim`;
  const v = await ok(victim, 'terminal_execute', { computer_id: id, background: true, command: 'echo secret-output; sleep 300' });
  await ok(victim, 'file_write', { computer_id: id, path: '/tmp/secret.txt', content: 'secret-file' });
  for (const [name, args] of [['process_list', {}], ['process_output', { process_id: v.process_id }],
    ['process_kill', { process_id: v.process_id }], ['file_read', { path: '/tmp/secret.txt' }], ['file_edit', { path: '/tmp/secret.txt', old_string: 'secret', new_string: 'x' }]]) {
    const r = await refused(thief, name, { computer_id: id, ...args }, /Temporary computer already has an active sandbox_handle/);
    assert.doesNotMatch(JSON.stringify(r), /secret-(output|file)/, name);
  }
  // 2026: a handle names one computer; another id or an unknown handle is refused
  const modern = new ClientV2({ name: 'm', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(modern);
  await modern.connect(new HttpV2(url));
  const mine = await ok(modern, 'terminal_execute', { command: 'true' });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  for (const name of ['process_list', 'process_output', 'file_read'])
    await refused(modern, name, { sandbox_handle: mine.sandbox_handle, computer_id: id, process_id: v.process_id, path: '/tmp/secret.txt' },
      /computer_id does not match sandbox_handle/);
  await refused(modern, 'file_read', { sandbox_handle: 'a'.repeat(43), path: '/tmp/secret.txt' }, /Unknown or expired sandbox_handle/);
  assert.equal((await ok(victim, 'process_output', { computer_id: id, process_id: v.process_id })).state, 'running');
  assert.equal((await ok(victim, 'file_read', { computer_id: id, path: '/tmp/secret.txt' })).content, 'secret-file');
});
