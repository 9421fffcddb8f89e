// Background processes (issue 28) and the file tools (issue 29) on the e2b backend, against the
// local fake of E2B (fake_e2b.py, real Docker containers behind envd's process API): the driver
// copies the exec helper into the sandbox on first need and runs its modes there. Through the
// official SDK over stdio (2025) and HTTP (2025 sessions, 2026 handles).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, statSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, ClientV2, HttpV1, HttpV2, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor, waitExit, sleep, freePort } from '../integration/lib.mjs';
import { call, ok, sha } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KEY = 'e2b_fake' + randomBytes(6).toString('hex');
const RUN = `e2bt${randomBytes(3).toString('hex')}`;
const TOOLS = ['--backend', 'e2b', '--tools', 'processes,files,lifecycle'];
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
let fake;
let api;
const procs = new Set();
const clients = new Set();
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); };
const env = () => ({ ...process.env, E2B_API_KEY: KEY, E2B_API_URL: api, E2B_SANDBOX_URL: api, E2B_DOMAIN: '' });

before(async () => {
  ({ proc: fake, url: api } = await new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_e2b.py'), '--key', KEY], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  fake?.kill('SIGTERM');   // the fake removes its containers
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
});

async function stdio() {
  const t = new StdioV1({ command: MSC_BIN, args: TOOLS, stderr: 'pipe', env: env() });
  watch(t.stderr);
  const c = new ClientV1({ name: 'e2b-tools-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function startHttp() {
  const port = await freePort();
  const e = env();
  delete e.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...TOOLS],
    { stdio: ['ignore', 'ignore', 'pipe'], env: e });
  procs.add(proc);
  watch(proc.stderr);
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, 'server not ready');
  return `http://127.0.0.1:${port}/mcp`;
}

async function connect(url, v2 = false) {
  const c = v2
    ? new ClientV2({ name: 'e2b-tools-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
    : new ClientV1({ name: 'e2b-tools-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(v2 ? new HttpV2(new URL(url)) : new HttpV1(new URL(url)));
  return c;
}

async function refused(c, name, args, re) {
  const res = await call(c, name, args);
  assert.equal(res.isError, true, `${name} refused: ${JSON.stringify(res)}`);
  assert.match(res.content[0].text, re);
  return res;
}
const sh = async (c, args, command) => (await ok(c, 'terminal_execute', { ...args, command })).stdout;

// A perl HTTP server (perl-base is in debian:bookworm-slim): ready after a second, then answers.
const SERVER = `sleep 1; exec perl -MIO::Socket::INET -e '$|=1; my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 8080, Listen => 5, ReuseAddr => 1) or die "listen: $!"; print "ready on 8080\\n"; while (my $c = $s->accept) { my $l = <$c>; print $c "HTTP/1.0 200 OK\\r\\n\\r\\nhello from the background\\n"; close $c; print "served $l"; }'`;
const CLIENT = `perl -MIO::Socket::INET -e '$c = IO::Socket::INET->new("127.0.0.1:8080") or die "connect: $!"; print $c "GET /x HTTP/1.0\\r\\n\\r\\n"; print <$c>;'`;

test('e2b: a background server answers, waits for its ready line, is read again from a new server (permanent computer) and killed', async () => {
  const id = `${RUN}-perm`;
  const where = { computer_id: id, temporary: false };
  const c = await stdio();
  const names = (await c.listTools()).tools.map((t) => t.name);
  for (const n of ['process_list', 'process_output', 'process_kill', 'file_read', 'file_write', 'file_edit'])
    assert.ok(names.includes(n), `${n} in ${names}`);
  const s = await ok(c, 'terminal_execute', { ...where, command: SERVER, background: true });
  assert.match(s.process_id, /^[a-z0-9-]+$/);
  assert.equal(s.computer_id, id);
  const t0 = Date.now();
  const ready = await ok(c, 'process_output', { ...where, process_id: s.process_id, wait_ms: 20000, pattern: 'ready on [0-9]+' });
  assert.match(ready.output, /ready on 8080/);
  assert.equal(ready.state, 'running');
  assert.ok(Date.now() - t0 < 15000, 'the pattern ended the wait');
  assert.match(await sh(c, where, CLIENT), /hello from the background/);
  const list = await ok(c, 'process_list', where);
  const row = list.processes.find((p) => p.process_id === s.process_id);
  assert.equal(row.state, 'running');
  await c.close();

  // a new server (the sandbox was paused and resumes): the same process, its output kept
  const c2 = await stdio();
  const later = await ok(c2, 'process_output', { ...where, process_id: s.process_id, offset: ready.offset, wait_ms: 5000, pattern: 'served' });
  assert.match(later.output, /served GET \/x/);
  assert.match(await sh(c2, where, CLIENT), /hello from the background/);
  const k = await ok(c2, 'process_kill', { ...where, process_id: s.process_id });
  assert.ok(['killed', 'exited'].includes(k.state), JSON.stringify(k));
  const end = await ok(c2, 'process_output', { ...where, process_id: s.process_id, wait_ms: 5000 });
  assert.equal(end.state, 'killed');
  assert.equal(await sh(c2, where, `${CLIENT} 2>&1 || echo refused`).then((o) => /refused/.test(o)), true, 'the server is gone');
  // a process that exits before it is read: its output and code stay
  const quick = await ok(c2, 'terminal_execute', { ...where, command: 'echo done-early; exit 7', background: true });
  const q = await ok(c2, 'process_output', { ...where, process_id: quick.process_id, wait_ms: 10000 });
  assert.equal(q.state, 'exited');
  assert.equal(q.exit_code, 7);
  assert.equal(q.output, 'done-early\n');
  await refused(c2, 'process_output', { ...where, process_id: 'nope-1' }, /Unknown process_id/);
  // E2B's restart is a pause and resume with the memory: the process lives on, none ended
  const sl = await ok(c2, 'terminal_execute', { ...where, command: 'sleep 300', background: true });
  const rs = await ok(c2, 'computer_restart', { computer_id: id });
  assert.equal(rs.background_processes_ended, undefined, JSON.stringify(rs));
  assert.equal((await ok(c2, 'process_output', { ...where, process_id: sl.process_id })).state, 'running');
  // a factory reset (a new sandbox) and a delete end them, and say how many
  const fr = await ok(c2, 'computer_factory_reset', { computer_id: id });
  assert.equal(fr.background_processes_ended, 1, JSON.stringify(fr));
  assert.deepEqual((await ok(c2, 'process_list', where)).processes, [], 'a reset computer has none');
  await ok(c2, 'terminal_execute', { ...where, command: 'sleep 300', background: true });
  const del = await ok(c2, 'computer_delete', { computer_id: id });
  assert.equal(del.background_processes_ended, 1, JSON.stringify(del));
  await c2.close();
});

test('e2b: file_write, file_read and file_edit keep any bytes, answer size and sha256 and follow the edit rules', async () => {
  const c = await stdio();
  const text = `quotes ' " \` $HOME $(id) \\ back\nsecond line\ttab\n\u00e9\u4e16\u{1f600}\r\nend`;
  const w = await ok(c, 'file_write', { path: '/tmp/t/a.txt', content: text, make_dirs: true });
  assert.equal(w.size, Buffer.byteLength(text));
  assert.equal(w.sha256, sha(text));
  const r = await ok(c, 'file_read', { path: '/tmp/t/a.txt' });
  assert.equal(r.content, text);
  assert.equal(r.sha256, sha(text));
  assert.equal((await sh(c, {}, 'sha256sum /tmp/t/a.txt')).split(' ')[0], sha(text), 'the bytes in the sandbox');
  // binary: all 256 byte values, as an embedded resource
  const bytes = Buffer.from([...Array(256).keys(), ...Array(256).keys()].reverse());
  const wb = await ok(c, 'file_write', { path: '/tmp/t/all.bin', content: bytes.toString('base64'), encoding: 'base64', mode: '0600' });
  assert.equal(wb.sha256, sha(bytes));
  const rbRes = await call(c, 'file_read', { path: '/tmp/t/all.bin' });
  assert.equal(rbRes.isError, false, JSON.stringify(rbRes));
  assert.equal(rbRes.structuredContent.binary, true);
  const res = rbRes.content.find((x) => x.type === 'resource');
  assert.ok(Buffer.from(res.resource.blob, 'base64').equals(bytes), 'byte-identical');
  assert.equal((await sh(c, {}, 'stat -c %a /tmp/t/all.bin')).trim(), '600');
  // the edit rules
  await ok(c, 'file_write', { path: '/tmp/t/e.py', content: 'a = 1\nb = 1\nprint(a)\n' });
  const e0 = await ok(c, 'file_read', { path: '/tmp/t/e.py' });
  const e1 = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'a = 1', new_string: 'a = "$(two)"', expected_sha256: e0.sha256 });
  const after1 = 'a = "$(two)"\nb = 1\nprint(a)\n';
  assert.equal(e1.replacements, 1);
  assert.equal(e1.sha256, sha(after1));
  assert.equal(e1.size, Buffer.byteLength(after1));
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: '=' }, /old_string occurs 2 times in the file; nothing was changed/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'nope', new_string: 'x' }, /old_string was not found in the file; nothing was changed/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'b = 1', new_string: 'b = 2', expected_sha256: e0.sha256 },
    /the file changed since it was read/);
  const all = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: '=', replace_all: true });
  assert.equal(all.replacements, 2);
  assert.equal(await sh(c, {}, 'cat /tmp/t/e.py'), 'a="$(two)"\nb=1\nprint(a)\n');
  await c.close();
});

test('e2b: computer_upload and computer_download carry a folder tree both ways, bytes and modes kept', async () => {
  const ws = mkdtempSync(path.join(os.tmpdir(), 'msc-e2b-ws-'));
  try {
    mkdirSync(path.join(ws, 'src', 'sub'), { recursive: true });
    const bytes = Buffer.from([...Array(256).keys()]);
    writeFileSync(path.join(ws, 'src', 'a.txt'), 'quotes \' " $HOME\n');
    writeFileSync(path.join(ws, 'src', 'sub', 'all.bin'), bytes);
    writeFileSync(path.join(ws, 'src', 'run.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
    const t = new StdioV1({ command: MSC_BIN, args: [...TOOLS, '--workspace', ws], stderr: 'pipe', env: env() });
    watch(t.stderr);
    const c = new ClientV1({ name: 'e2b-copy-test', version: '1' }, { capabilities: {} });
    clients.add(c);
    await c.connect(t);
    const up = await ok(c, 'computer_upload', { local_path: 'src', path: '/tmp/up' });
    assert.equal(up.files, 3, JSON.stringify(up));
    assert.equal(await sh(c, {}, '/tmp/up/run.sh'), 'ran\n');
    assert.equal((await sh(c, {}, 'sha256sum /tmp/up/sub/all.bin')).split(' ')[0], sha(bytes));
    await sh(c, {}, 'echo made > /tmp/up/sub/new.txt');
    const down = await ok(c, 'computer_download', { path: '/tmp/up', local_path: 'back' });
    assert.equal(down.files, 4, JSON.stringify(down));
    assert.ok(readFileSync(path.join(ws, 'back', 'sub', 'all.bin')).equals(bytes), 'byte-identical');
    assert.equal(readFileSync(path.join(ws, 'back', 'sub', 'new.txt'), 'utf8'), 'made\n');
    assert.equal(statSync(path.join(ws, 'back', 'run.sh')).mode & 0o777, 0o755);
    await c.close();
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('e2b attack: another agent cannot list, read or kill the processes, nor read or write the files (2025 sessions and 2026 handles)', async () => {
  const url = await startHttp();
  const victim = await connect(url);
  const thief = await connect(url);
  const id = `${RUN}-victim`;
  const v = await ok(victim, 'terminal_execute', { computer_id: id, background: true, command: 'echo secret-output; sleep 300' });
  await ok(victim, 'file_write', { computer_id: id, path: '/tmp/secret.txt', content: 'secret-file' });
  for (const [name, args] of [['process_list', {}], ['process_output', { process_id: v.process_id }],
    ['process_kill', { process_id: v.process_id, signal: 'KILL' }], ['file_read', { path: '/tmp/secret.txt' }],
    ['file_write', { path: '/tmp/secret.txt', content: 'stolen' }]]) {
    const r = await refused(thief, name, { computer_id: id, ...args }, /Temporary computer already has an active sandbox_handle/);
    assert.doesNotMatch(JSON.stringify(r), /secret-(output|file)/, name);
  }
  const modern = await connect(url, true);
  const mine = await ok(modern, 'terminal_execute', { command: 'sleep 300', background: true });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  for (const name of ['process_list', 'process_output', 'file_read']) {
    await refused(modern, name, { sandbox_handle: mine.sandbox_handle, computer_id: id, process_id: v.process_id, path: '/tmp/secret.txt' },
      /computer_id does not match sandbox_handle/);
  }
  await refused(modern, 'process_output', { sandbox_handle: 'a'.repeat(43), process_id: v.process_id }, /Unknown or expired sandbox_handle/);
  const still = await ok(victim, 'process_output', { computer_id: id, process_id: v.process_id });
  assert.equal(still.state, 'running');
  assert.match(still.output, /secret-output/);
  assert.equal((await ok(victim, 'file_read', { computer_id: id, path: '/tmp/secret.txt' })).content, 'secret-file');
});
