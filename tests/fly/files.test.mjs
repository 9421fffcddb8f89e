// The file tools (issue 29, --tools files) on the fly backend, against the local fake of the Fly
// Machines API (fake_fly.py, whose Machines are Docker containers). Fly's exec endpoint takes
// stdin and answers output as JSON strings (text only), so the driver copies the exec helper
// into the Machine with its bytes as base64 on stdin and runs its modes with stdin and stdout as
// base64 (lib/msc_helper_copy.c): any bytes pass, and the agent's paths and content travel as
// argv and stdin, never inside a shell line (the fake records each exec's argv). Through the
// official SDK over stdio (2025) and HTTP (2025 sessions, 2026 handles).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, statSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClientV1, ClientV2, HttpV1, HttpV2, StdioV1 } from '../integration/sdk_clients.mjs';
import { MSC_BIN, waitFor, waitExit, freePort } from '../integration/lib.mjs';
import { call, ok, refused, sha } from '../integration/tool_calls.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = 'fake-token-' + randomBytes(6).toString('hex');
const RUN = `flyf${randomBytes(3).toString('hex')}`;
const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /;
let fake;
let api;
let home;
const procs = new Set();
const clients = new Set();
const stderrs = [];
const watch = (stream) => { const box = { text: '' }; stderrs.push(box); stream.on('data', (c) => { box.text = (box.text + c).slice(-200000); }); };
const env = () => {
  const e = { ...process.env, HOME: home, FLY_API_TOKEN: TOKEN, FLY_TOKEN: '', FLY_APP_NAME: '', FLY_ORG: '',
    FLY_API_HOSTNAME: '', KILNTAINERS_FLY_STATE_FILE: '' };
  delete e.KILNTAINERS_AUTH_TOKEN;
  return e;
};
const flags = (extra = []) => ['--backend', 'fly', '--fly-api-url', api, '--tools', 'files', ...extra];

async function fakeApi(method, p, body) {
  const r = await fetch(api + p, { method, headers: { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return text ? JSON.parse(text) : null;
}
// The execs sent to the Machine of computer `id` (the tests run at once).
async function execs(id) {
  const m = (await fakeApi('GET', '/_fake/state')).machines
    .find((x) => x.config.metadata?.['kilntainers-computer-id'] === id && x.state !== 'destroyed');
  assert.ok(m, `a Machine for ${id}`);
  return (await fakeApi('GET', '/_fake/requests')).filter((r) => r.command && r.path.includes(`/machines/${m.id}/exec`));
}

before(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'msc-fly-files-'));
  ({ proc: fake, url: api } = await new Promise((resolve, reject) => {
    const p = spawn('python3', [path.join(HERE, 'fake_fly.py'), '--token', TOKEN], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (c) => { out += c; const m = /PORT (\d+)/.exec(out); if (m) resolve({ proc: p, url: `http://127.0.0.1:${m[1]}` }); });
    p.on('exit', (code) => reject(new Error(`fake_fly.py exited ${code}`)));
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
  rmSync(home, { recursive: true, force: true });
});

async function stdio(extra = []) {
  const t = new StdioV1({ command: MSC_BIN, args: flags(extra), stderr: 'pipe', env: env() });
  watch(t.stderr);
  const c = new ClientV1({ name: 'fly-files-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function startHttp() {
  const port = await freePort();
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), ...flags()],
    { stdio: ['ignore', 'ignore', 'pipe'], env: env() });
  procs.add(proc);
  watch(proc.stderr);
  const up = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(up, 'server not ready');
  return `http://127.0.0.1:${port}/mcp`;
}

async function connect(url, v2 = false) {
  const c = v2
    ? new ClientV2({ name: 'fly-files-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
    : new ClientV1({ name: 'fly-files-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(v2 ? new HttpV2(new URL(url)) : new HttpV1(new URL(url)));
  return c;
}

const sh = async (c, command, where = {}) => (await ok(c, 'terminal_execute', { ...where, command })).stdout;

// The four run at once (their own servers and computers): the fake's execs are slow, not busy.
describe('fly files', { concurrency: true }, () => {
  test('fly: file_write and file_read keep any bytes and names, answer size and sha256, and pass the agent\'s data as argv and stdin only', async () => {
    const c = await stdio();
    const names = (await c.listTools()).tools.map((t) => t.name);
    for (const n of ['file_read', 'file_write', 'file_edit', 'computer_upload', 'computer_download'])
      assert.ok(names.includes(n), `${n} in ${names}`);
    // text with everything a shell would mangle; the first call copies the helper in
    const text = `quotes ' " \` $HOME $(id) \\ back\nsecond line\ttab\n\u00e9\u4e16\u{1f600}\r\nend`;
    const w = await ok(c, 'file_write', { path: '/tmp/t/a.txt', content: text, make_dirs: true });
    assert.equal(w.size, Buffer.byteLength(text));
    assert.equal(w.sha256, sha(text));
    assert.equal(w.created, true);
    assert.equal(w.mode, '0644');
    const r = await ok(c, 'file_read', { path: '/tmp/t/a.txt' });
    assert.equal(r.content, text);
    assert.equal(r.sha256, sha(text));
    assert.equal(r.size, w.size);

    // binary: all 256 byte values in and out (an embedded resource), and 2 MiB of random bytes
    const bytes = Buffer.from([...Array(256).keys(), ...Array(256).keys()].reverse());
    const wb = await ok(c, 'file_write', { path: '/tmp/t/all.bin', content: bytes.toString('base64'), encoding: 'base64', mode: '0600' });
    assert.equal(wb.sha256, sha(bytes));
    assert.equal(wb.size, 512);
    const rbRes = await call(c, 'file_read', { path: '/tmp/t/all.bin' });
    assert.equal(rbRes.isError, false, JSON.stringify(rbRes));
    assert.equal(rbRes.structuredContent.binary, true);
    assert.equal(rbRes.structuredContent.sha256, sha(bytes));
    const res = rbRes.content.find((x) => x.type === 'resource');
    assert.equal(res.resource.uri, 'file:///tmp/t/all.bin');
    assert.ok(Buffer.from(res.resource.blob, 'base64').equals(bytes), 'byte-identical');
    const big = randomBytes(2 * 1024 * 1024);
    const wbig = await ok(c, 'file_write', { path: '/tmp/t/big.bin', content: big.toString('base64'), encoding: 'base64' });
    assert.equal(wbig.size, big.length);
    assert.equal(wbig.sha256, sha(big));
    // the bytes in the Machine
    assert.equal(await sh(c, 'cd /tmp/t && sha256sum a.txt big.bin | cut -c1-64; stat -c %a all.bin'), `${sha(text)}\n${sha(big)}\n600\n`);
    // invalid UTF-8 reads as U+FFFD, the hash is of the bytes
    const latin = Buffer.concat([Buffer.from('ok '), Buffer.from([0xff, 0xc3]), Buffer.from(' end\n'), Buffer.from('plain\n'.repeat(4))]);
    await ok(c, 'file_write', { path: '/tmp/t/latin.txt', content: latin.toString('base64'), encoding: 'base64' });
    const lr = await ok(c, 'file_read', { path: '/tmp/t/latin.txt' });
    assert.equal(lr.content, `ok \ufffd\ufffd end\n${'plain\n'.repeat(4)}`);
    assert.equal(lr.invalid_utf8, true);
    assert.equal(lr.sha256, sha(latin));

    // a name with a newline, quotes and a $( ): a plain name, never a shell word
    const odd = '/tmp/t/we"i\'rd\nna me $(touch owned) `id`';
    const wo = await ok(c, 'file_write', { path: odd, content: 'odd' });
    assert.equal(wo.path, odd);
    assert.equal((await ok(c, 'file_read', { path: odd })).content, 'odd');
    assert.equal(await sh(c, 'ls /tmp/t | grep -c "na me"; find / -xdev -name owned 2>/dev/null | wc -l'), '1\n0\n');
    const calls = await execs(w.computer_id);
    const scripts = calls.flatMap((x) => (x.command[1] === '-c' ? [x.command[2]] : []));
    assert.ok(scripts.length > 0);
    for (const s of scripts) assert.ok(!s.includes('na me') && !s.includes('quotes'), `user data inside a shell line: ${s.slice(0, 200)}`);
    assert.ok(calls.some((x) => x.command.includes(odd)), 'the path travels as its own argv element');
    // the helper was copied in once, its bytes as base64 text on stdin
    const installs = calls.filter((x) => x.command.some((a) => /base64 -d > "\$t"/.test(a)));
    assert.equal(installs.length, 1, 'one copy of the helper');
    assert.ok(installs[0].stdin_len > 100000, 'the helper went as stdin');

    // background processes are off on Fly: terminal_execute cannot reach the helper's --process mode
    const pr = await call(c, 'terminal_execute', { args: ['/.msc-helper', '--process', 'list'] });
    assert.equal(pr.isError, true, JSON.stringify(pr));
    assert.match(JSON.stringify(pr.content), /background processes are off/);

    // the helper's copy gone (a Machine whose /tmp was wiped): copied in again at the next call
    await sh(c, 'rm -f /tmp/.msc-helper-*');
    assert.equal((await ok(c, 'file_read', { path: '/tmp/t/a.txt' })).content, text);
    await c.close();
  });

  test('fly: file_edit follows the edit rules; missing files, stale edits, the kernel\'s files and oversize input are refused', async () => {
    const c = await stdio();
    // edits: one exact match, all, missing, not unique, stale
    await ok(c, 'file_write', { path: '/tmp/t/e.py', content: 'a = 1\nb = 1\nprint(a)\n', make_dirs: true });
    const e0 = await ok(c, 'file_read', { path: '/tmp/t/e.py' });
    const e1 = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'a = 1', new_string: 'a = "$(two)"', expected_sha256: e0.sha256 });
    const after1 = 'a = "$(two)"\nb = 1\nprint(a)\n';
    assert.equal(e1.replacements, 1);
    assert.equal(e1.sha256_before, e0.sha256);
    assert.equal(e1.sha256, sha(after1));
    assert.equal(e1.size, Buffer.byteLength(after1));
    await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: '=' },
      /old_string occurs 2 times in the file; nothing was changed: include more of the surrounding text to make it unique, or pass replace_all: true/);
    await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'nope', new_string: 'x' }, /old_string was not found in the file; nothing was changed/);
    await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'b = 1', new_string: 'b = 2', expected_sha256: e0.sha256 },
      new RegExp(`the file changed since it was read: its sha256 is ${e1.sha256}, not the expected ${e0.sha256}; nothing was changed`));
    assert.equal(await sh(c, 'cat /tmp/t/e.py'), after1, 'the refused edits changed nothing');
    const all = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: '=', replace_all: true, expected_sha256: e1.sha256 });
    assert.equal(all.replacements, 2);
    assert.equal(await sh(c, 'cat /tmp/t/e.py'), 'a="$(two)"\nb=1\nprint(a)\n');

    // what the tools refuse, with the same texts as on the other backends
    await refused(c, 'file_read', { path: '/tmp/t/none' }, /\/tmp\/t\/none: no such file/);
    await refused(c, 'file_write', { path: '/tmp/t/x/y/z.txt', content: 'z' }, /the folder x does not exist \(make_dirs: true makes it\)/);
    await refused(c, 'file_read', { path: '/proc/self/environ' }, /refused: the path is in \/proc/);
    await sh(c, 'mkfifo /tmp/t/fifo; ln -s /proc/1/environ /tmp/t/env; printf "head\\n" > /tmp/t/huge; truncate -s 10G /tmp/t/huge');
    await refused(c, 'file_read', { path: '/tmp/t/fifo' }, /refused: it is a fifo/);
    await refused(c, 'file_read', { path: '/tmp/t/env' }, /refused: the path is in \/proc/);
    await refused(c, 'file_write', { path: '/tmp/t/b', content: 'x'.repeat(2 * 1024 * 1024 + 1) }, /content: more than 2 MiB/);
    // a 10 GB sparse file answers at once, never read whole
    const hg = await ok(c, 'file_read', { path: '/tmp/t/huge' });
    assert.equal(hg.size, 10 * 1024 ** 3);
    assert.equal(hg.sha256, null);
    assert.match(hg.sha256_skipped, /over 256 MiB/);
    await refused(c, 'file_edit', { path: '/tmp/t/huge', old_string: 'head', new_string: 'x' }, /file_edit edits files up to 32 MiB/);
    await c.close();
  });

  test('fly: computer_upload and computer_download carry a folder tree both ways, bytes and modes kept', async () => {
    const ws = mkdtempSync(path.join(os.tmpdir(), 'msc-fly-ws-'));
    try {
      mkdirSync(path.join(ws, 'src', 'sub'), { recursive: true });
      const bytes = Buffer.from([...Array(256).keys()]);
      writeFileSync(path.join(ws, 'src', 'a.txt'), 'quotes \' " $HOME\n');
      writeFileSync(path.join(ws, 'src', 'sub', 'all.bin'), bytes);
      writeFileSync(path.join(ws, 'src', 'run.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
      symlinkSync('a.txt', path.join(ws, 'src', 'link'));
      const big = randomBytes(3 * 1024 * 1024 + 17);   // more than one 2 MiB batch and part
      writeFileSync(path.join(ws, 'src', 'sub', 'big.bin'), big);
      const c = await stdio(['--workspace', ws]);
      const up = await ok(c, 'computer_upload', { local_path: 'src', path: '/tmp/up' });
      assert.equal(up.files, 4, JSON.stringify(up));
      assert.equal(up.symlinks, 1, JSON.stringify(up));
      assert.equal(await sh(c, '/tmp/up/run.sh; readlink /tmp/up/link; sha256sum /tmp/up/sub/all.bin /tmp/up/sub/big.bin | cut -c1-64'),
        `ran\na.txt\n${sha(bytes)}\n${sha(big)}\n`);
      const randSha = (await sh(c, 'echo made > /tmp/up/sub/new.txt; head -c 300000 /dev/urandom > /tmp/up/sub/rand.bin; sha256sum /tmp/up/sub/rand.bin')).split(' ')[0];
      const down = await ok(c, 'computer_download', { path: '/tmp/up', local_path: 'back' });
      assert.equal(down.files, 6, JSON.stringify(down));
      assert.ok(readFileSync(path.join(ws, 'back', 'sub', 'big.bin')).equals(big), '3 MiB, byte-identical');
      assert.ok(readFileSync(path.join(ws, 'back', 'sub', 'all.bin')).equals(bytes), 'byte-identical');
      assert.equal(readFileSync(path.join(ws, 'back', 'sub', 'new.txt'), 'utf8'), 'made\n');
      assert.equal(sha(readFileSync(path.join(ws, 'back', 'sub', 'rand.bin'))), randSha, 'random bytes, unchanged');
      assert.equal(statSync(path.join(ws, 'back', 'run.sh')).mode & 0o777, 0o755);
      // outside the workspace: refused before anything moves
      await refused(c, 'computer_download', { path: '/tmp/up', local_path: '/etc/x' }, /outside|allowed/);
      await c.close();
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test('fly attack: another agent cannot read or write a temporary computer\'s files (2025 sessions and 2026 handles)', async () => {
    const url = await startHttp();
    const victim = await connect(url);
    const thief = await connect(url);
    const id = `${RUN}-victim`;
    await ok(victim, 'file_write', { computer_id: id, path: '/tmp/secret.txt', content: 'secret-file' });
    for (const [name, args] of [['file_read', { path: '/tmp/secret.txt' }], ['file_write', { path: '/tmp/secret.txt', content: 'stolen' }],
      ['file_edit', { path: '/tmp/secret.txt', old_string: 'secret', new_string: 'stolen' }]]) {
      const r = await call(thief, name, { computer_id: id, ...args });
      assert.equal(r.isError, true, name);
      assert.match(r.content[0].text, /Temporary computer already has an active sandbox_handle/, name);
      assert.doesNotMatch(JSON.stringify(r), /secret-file/, name);
    }
    const modern = await connect(url, true);
    await refused(modern, 'file_read', { sandbox_handle: 'a'.repeat(43), path: '/tmp/secret.txt' }, /Unknown or expired sandbox_handle/);
    const mine = await ok(modern, 'file_write', { path: '/tmp/mine.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' });
    assert.ok(mine.sandbox_handle, 'a handle was minted');
    for (const name of ['file_read', 'file_write', 'file_edit']) {
      await refused(modern, name, { sandbox_handle: mine.sandbox_handle, computer_id: id, path: '/tmp/secret.txt', content: 'x', old_string: 's', new_string: 'x' },
        /computer_id does not match sandbox_handle/);
    }
    const rr = await call(modern, 'file_read', { sandbox_handle: mine.sandbox_handle, path: '/tmp/mine.bin' });
    assert.equal(rr.isError, false, JSON.stringify(rr));
    assert.ok(Buffer.from(rr.content.find((x) => x.type === 'resource').resource.blob, 'base64').equals(Buffer.from([0, 1, 2, 255])));
    assert.equal(rr.structuredContent.sha256, mine.sha256);
    const cross = await call(victim, 'file_read', { computer_id: mine.computer_id, path: '/tmp/mine.bin' });
    assert.equal(cross.isError, true);
    assert.equal((await ok(victim, 'file_read', { computer_id: id, path: '/tmp/secret.txt' })).content, 'secret-file');
  });
});
