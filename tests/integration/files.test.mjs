// The file tools (issue 29, --tools files): file_read, file_write and file_edit, through the
// official SDK (v1 client at 2025-11-25 over stdio and HTTP, v2 client at 2026-07-28 over HTTP).
// Every container made here carries the label msc.files-test=<run> and is removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MSC_BIN, ENGINE, docker, waitFor, waitExit, sleep, freePort } from './lib.mjs';
import { call, ok, refused, sha } from './tool_calls.mjs';

const RUN = `files${randomBytes(3).toString('hex')}`;
// A small disk (full after 64 KiB) and a read-only folder, for the write failures.
const FLAGS = [`--docker-run-flag=--label=msc.files-test=${RUN}`, '--docker-run-flag=--tmpfs=/small:size=64k',
  '--docker-run-flag=--tmpfs=/ro:ro,size=64k', '--tools', 'files', '--driver-id', RUN,
  ...(ENGINE === 'podman' ? ['--engine', 'podman'] : [])];

// A helper folder of this run's own: the computers run this build's exec helper even when another
// build's server on the same host installs its own into the shared default folder.
const FX_DIR = mkdtempSync(path.join(os.tmpdir(), 'msc-files-test-'));
const ENV = { ...process.env, MSC_FAST_EXEC_DIR: path.join(FX_DIR, 'fx') };
delete ENV.KILNTAINERS_AUTH_TOKEN;

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
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.files-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
  rmSync(FX_DIR, { recursive: true, force: true });
});

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

async function stdioV1(args = FLAGS) {
  const t = new StdioV1({ command: MSC_BIN, args, stderr: 'pipe', env: ENV });
  watch(t.stderr);
  const c = new ClientV1({ name: 'files-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function v1Http(url) {
  const c = new ClientV1({ name: 'files-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}

async function v2Http(url) {
  const c = new ClientV2({ name: 'files-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}

const sh = async (c, command) => (await ok(c, 'terminal_execute', { command })).stdout;

test('stdio (2025): text and binary round trips, modes, edits, pages, and the bad inputs', async () => {
  const c = await stdioV1();
  const tools = (await c.listTools()).tools;
  assert.deepEqual(tools.map((t) => t.name), ['terminal_execute', 'computer_release', 'file_read', 'file_write', 'file_edit', 'computer_upload', 'computer_download']);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(byName.file_write.inputSchema.required, ['path', 'content']);
  assert.equal(byName.file_read.annotations.readOnlyHint, true);
  await ok(c, 'terminal_execute', { command: 'mkdir -p /tmp/t' });

  // text with everything a shell would mangle
  const text = `quotes ' " \` $HOME $(id) \\ back\nsecond line\ttab\n\u00e9\u4e16\u{1f600}\r\nend`;
  const w = await ok(c, 'file_write', { path: '/tmp/t/a.txt', content: text });
  assert.equal(w.size, Buffer.byteLength(text));
  assert.equal(w.sha256, sha(text));
  assert.equal(w.created, true);
  assert.equal(w.mode, '0644');
  const r = await ok(c, 'file_read', { path: '/tmp/t/a.txt' });
  assert.equal(r.content, text);
  assert.equal(r.sha256, sha(text));
  assert.equal(r.size, w.size);
  assert.equal(r.binary, false);
  assert.equal(r.total_lines, 4);
  assert.equal(r.more, false);
  assert.equal((await sh(c, 'sha256sum /tmp/t/a.txt')).split(' ')[0], sha(text), 'the bytes in the computer');

  // binary: all 256 byte values, through base64
  const bytes = Buffer.from([...Array(256).keys(), ...Array(256).keys()].reverse());
  const wb = await ok(c, 'file_write', { path: '/tmp/t/all.bin', content: bytes.toString('base64'), encoding: 'base64', mode: '0600' });
  assert.equal(wb.sha256, sha(bytes));
  assert.equal(wb.size, 512);
  const rbRes = await call(c, 'file_read', { path: '/tmp/t/all.bin' });
  assert.equal(rbRes.isError, false, JSON.stringify(rbRes));
  const rb = rbRes.structuredContent;
  assert.equal(rb.binary, true);
  assert.equal(rb.sha256, sha(bytes));
  assert.equal(rb.mime_type, 'application/octet-stream');
  const res = rbRes.content.find((x) => x.type === 'resource');
  assert.equal(res.resource.uri, 'file:///tmp/t/all.bin');
  assert.equal(res.resource.mimeType, 'application/octet-stream');
  assert.ok(Buffer.from(res.resource.blob, 'base64').equals(bytes), 'byte-identical');
  assert.equal(rb.blob, undefined, 'the bytes once, in the resource');
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(100)]);
  await ok(c, 'file_write', { path: '/tmp/t/i.png', content: png.toString('base64'), encoding: 'base64' });
  assert.equal((await ok(c, 'file_read', { path: '/tmp/t/i.png' })).mime_type, 'image/png');

  // modes: asked for, kept on a rewrite, and the owner too
  assert.equal(await sh(c, 'stat -c %a /tmp/t/all.bin'), '600\n');
  await ok(c, 'file_write', { path: '/tmp/t/run.sh', content: '#!/bin/sh\necho ran "$1"\n', mode: 755 });
  assert.equal(await sh(c, '/tmp/t/run.sh x'), 'ran x\n');
  await sh(c, 'chown 1234:2345 /tmp/t/run.sh');
  const again = await ok(c, 'file_write', { path: '/tmp/t/run.sh', content: '#!/bin/sh\necho again\n' });
  assert.equal(again.mode, '0755');
  assert.equal(again.created, false);
  assert.equal(await sh(c, 'stat -c "%a %u %g" /tmp/t/run.sh; ls -A /tmp/t | grep -c kiln || true'), '755 1234 2345\n0\n');

  // folders: refused without make_dirs, made with it; relative paths from the working folder
  await refused(c, 'file_write', { path: '/tmp/t/x/y/z.txt', content: 'z' }, /the folder x does not exist \(make_dirs: true makes it\)/);
  const deep = await ok(c, 'file_write', { path: '/tmp/t/x/y/z.txt', content: 'z', make_dirs: true });
  assert.equal(deep.path, '/tmp/t/x/y/z.txt');
  const cwd = (await sh(c, 'pwd')).trim();
  const rel = await ok(c, 'file_write', { path: 'rel-files-test.txt', content: 'rel' });
  assert.equal(rel.path, `${cwd === '/' ? '' : cwd}/rel-files-test.txt`);
  assert.equal(await sh(c, `cat ${rel.path}`), 'rel');
  // `..` resolves as the kernel does; names with newlines and quotes are plain names
  assert.equal((await ok(c, 'file_read', { path: '/tmp/t/x/../x/y/../y/z.txt' })).content, 'z');
  const odd = '/tmp/t/we"i\'rd\nna me $(x)';
  await ok(c, 'file_write', { path: odd, content: 'odd' });
  assert.equal((await ok(c, 'file_read', { path: odd })).content, 'odd');
  assert.equal(await sh(c, 'ls /tmp/t | grep -c "na me"'), '1\n');

  // lines from an offset, a limit, numbers, and pages within the reply limit (8192 by default)
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 40)}`).join('\n') + '\n';
  await ok(c, 'file_write', { path: '/tmp/t/long.txt', content: lines });
  const p1 = await ok(c, 'file_read', { path: '/tmp/t/long.txt', offset: 3, limit: 2 });
  assert.equal(p1.content, `line 3 ${'x'.repeat(2)}\nline 4 ${'x'.repeat(3)}\n`);
  assert.equal(p1.lines, 2);
  assert.equal(p1.next_offset, 5);
  assert.equal(p1.more, true);
  assert.equal(p1.total_lines, 3000);
  const n = await ok(c, 'file_read', { path: '/tmp/t/long.txt', offset: 2999, line_numbers: true });
  assert.equal(n.content, `  2999\tline 2999 ${'x'.repeat(2998 % 40)}\n  3000\tline 3000 ${'x'.repeat(2999 % 40)}\n`);
  assert.equal(n.more, false);
  let got = '';
  let pages = 0;
  for (let off = 1; ; pages++) {
    const pg = await ok(c, 'file_read', { path: '/tmp/t/long.txt', offset: off });
    assert.ok(JSON.stringify(pg).length < 8192 + 2000, 'a page fits the reply');
    got += pg.content;
    if (!pg.more) break;
    off = pg.next_offset;
  }
  assert.equal(got, lines, 'the pages join to the file');
  assert.ok(pages > 5, `${pages} pages`);
  await refused(c, 'file_read', { path: '/tmp/t/long.txt', offset: 3002 }, /offset 3002 is past the end of the file \(3000 lines\)/);
  // invalid UTF-8 reads as U+FFFD, and says so
  const bad = Buffer.concat([Buffer.from('ok '), Buffer.from([0xff, 0xc3]), Buffer.from(' end\n'), Buffer.from('plain\n'.repeat(4))]);
  await ok(c, 'file_write', { path: '/tmp/t/latin.txt', content: bad.toString('base64'), encoding: 'base64' });
  const lr = await ok(c, 'file_read', { path: '/tmp/t/latin.txt' });
  assert.equal(lr.content, `ok \ufffd\ufffd end\n${'plain\n'.repeat(4)}`);
  assert.equal(lr.invalid_utf8, true);
  assert.equal(lr.sha256, sha(bad), 'the hash is of the bytes');

  // edits: one exact match, all, missing, not unique, stale
  await ok(c, 'file_write', { path: '/tmp/t/e.py', content: 'a = 1\nb = 1\nprint(a)\n' });
  const e0 = await ok(c, 'file_read', { path: '/tmp/t/e.py' });
  const e1 = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'a = 1', new_string: 'a = "$(two)"', expected_sha256: e0.sha256 });
  assert.equal(e1.replacements, 1);
  assert.equal(e1.sha256_before, e0.sha256);
  const after1 = 'a = "$(two)"\nb = 1\nprint(a)\n';
  assert.equal(e1.sha256, sha(after1));
  assert.equal(e1.size, Buffer.byteLength(after1));
  assert.equal(await sh(c, 'cat /tmp/t/e.py'), after1);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: '=' }, /old_string occurs 2 times in the file; nothing was changed: include more of the surrounding text to make it unique, or pass replace_all: true/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'nope', new_string: 'x' }, /old_string was not found in the file; nothing was changed/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'b = 1', new_string: 'b = 2', expected_sha256: e0.sha256 },
    new RegExp(`the file changed since it was read: its sha256 is ${e1.sha256}, not the expected ${e0.sha256}; nothing was changed`));
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: '', new_string: 'x' }, /old_string: must not be empty/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'x', new_string: 'x' }, /the same as old_string/);
  await refused(c, 'file_edit', { path: '/tmp/t/e.py', old_string: 'b', new_string: 'x', expected_sha256: 'zz' }, /expected_sha256: 64 hexadecimal digits/);
  assert.equal(await sh(c, 'cat /tmp/t/e.py'), after1, 'the refused edits changed nothing');
  const e2 = await ok(c, 'file_edit', { path: '/tmp/t/e.py', old_string: ' = ', new_string: ' := ', replace_all: true, expected_sha256: e1.sha256.toUpperCase() });
  assert.equal(e2.replacements, 2);
  assert.equal(await sh(c, 'cat /tmp/t/e.py'), 'a := "$(two)"\nb := 1\nprint(a)\n');

  // what the tools refuse: devices, fifos (at once, never blocking), sockets, folders, the
  // kernel's files and the helper's own, also behind symlinks
  await sh(c, 'mkfifo /tmp/t/fifo; ln -s /proc/1/environ /tmp/t/env; ln -s /.msc /tmp/t/msc; ln -s /proc/self /tmp/t/self; ln -s /nowhere /tmp/t/dangling');
  const t0 = Date.now();
  await refused(c, 'file_read', { path: '/tmp/t/fifo' }, /refused: it is a fifo/);
  await refused(c, 'file_write', { path: '/tmp/t/fifo', content: 'x' }, /refused: it is a fifo/);
  assert.ok(Date.now() - t0 < 10000, 'no wait on the fifo');
  await refused(c, 'file_read', { path: '/dev/zero' }, /refused: it is a device/);
  await refused(c, 'file_read', { path: '/tmp/t' }, /refused: it is a folder/);
  await refused(c, 'file_read', { path: '/tmp/t/' }, /is a folder, not a file/);
  await refused(c, 'file_read', { path: '/proc/self/environ' }, /refused: the path is in \/proc/);
  await refused(c, 'file_read', { path: '/tmp/t/env' }, /refused: the path is in \/proc/);
  await refused(c, 'file_read', { path: '/tmp/t/self/environ' }, /refused: the path is in \/proc/);
  await refused(c, 'file_write', { path: '/proc/sys/kernel/hostname', content: 'x' }, /refused: the path is in \/proc/);
  await refused(c, 'file_read', { path: '/sys/kernel/uevent_helper' }, /refused: the path is in \/sys/);
  await refused(c, 'file_read', { path: '/tmp/t/msc/sock' }, /refused: the path is in the exec helper's own folder \/\.msc/);
  await refused(c, 'file_write', { path: '/tmp/t/msc/planted', content: 'x' }, /refused: the path is in the exec helper's own folder \/\.msc/);
  await refused(c, 'file_write', { path: '/.msc/x/y', content: 'x', make_dirs: true }, /exec helper's own folder/);
  await refused(c, 'file_write', { path: '/.msc-helper', content: 'x' }, /refused: the path is the exec helper itself/);
  await refused(c, 'file_read', { path: '/.msc-helper' }, /refused: the path is the exec helper itself/);
  assert.equal(await sh(c, 'ls -A /.msc | grep -cE "^(planted|x)$" || true'), '0\n', 'nothing was planted in the helper folder');
  await refused(c, 'file_read', { path: '/tmp/t/dangling' }, /a symlink to a missing file/);
  await refused(c, 'file_read', { path: '/tmp/t/none' }, /\/tmp\/t\/none: no such file/);
  // a 10 GB sparse file answers at once, nothing read whole
  await sh(c, 'printf "head\\n" > /tmp/t/big; truncate -s 10G /tmp/t/big');
  const t1 = Date.now();
  const big = await ok(c, 'file_read', { path: '/tmp/t/big' });
  assert.ok(Date.now() - t1 < 10000);
  assert.equal(big.size, 10 * 1024 ** 3);
  assert.equal(big.binary, true);
  assert.equal(big.sha256, null);
  assert.match(big.sha256_skipped, /over 256 MiB/);
  assert.match(big.note, /a binary file of 10737418240 bytes/);
  await refused(c, 'file_edit', { path: '/tmp/t/big', old_string: 'head', new_string: 'x' }, /file_edit edits files up to 32 MiB/);
  // a full disk and a read-only folder: a clear error, the old file kept, no temporary left
  await ok(c, 'file_write', { path: '/small/keep.txt', content: 'kept' });
  await refused(c, 'file_write', { path: '/small/keep.txt', content: randomBytes(96 * 1024).toString('base64'), encoding: 'base64' },
    /no space left on the computer's disk; nothing was changed/);
  assert.equal(await sh(c, 'cat /small/keep.txt; ls -A /small'), 'keptkeep.txt\n');
  await refused(c, 'file_write', { path: '/ro/f.txt', content: 'x' }, /read-only file system; nothing was changed/);
  // argument errors
  await refused(c, 'file_read', {}, /path: Field required/);
  await refused(c, 'file_read', { path: '' }, /path: must not be empty/);
  await refused(c, 'file_read', { path: 'a\u0000b' }, /path: contains a NUL character/);
  await refused(c, 'file_read', { path: '/tmp/t/a.txt', limit: 0 }, /limit: must be 1 to 1000000/);
  await refused(c, 'file_read', { path: '/tmp/t/a.txt', command: 'id' }, /command: not an argument of this tool/);
  await refused(c, 'file_write', { path: '/tmp/t/b', content: 'a-b', encoding: 'base64' }, /content: not valid base64/);
  await refused(c, 'file_write', { path: '/tmp/t/b', content: 'x', mode: '999' }, /mode: octal permission bits/);
  await refused(c, 'file_write', { path: '/tmp/t/b', content: 'x', encoding: 'latin1' }, /encoding: "utf-8" or "base64"/);
  await refused(c, 'file_write', { path: '/tmp/t/b', content: 'x'.repeat(2 * 1024 * 1024 + 1) }, /content: more than 2 MiB/);
  // an empty file
  const empty = await ok(c, 'file_write', { path: '/tmp/t/empty', content: '' });
  assert.equal(empty.sha256, sha(''));
  const er = await ok(c, 'file_read', { path: '/tmp/t/empty' });
  assert.equal(er.content, '');
  assert.equal(er.size, 0);
  await c.close();
});

test('attack: another agent cannot read or write a temporary computer\'s files (2025 sessions and 2026 handles)', async () => {
  const url = await startHttp();
  const victim = await v1Http(url);
  const thief = await v1Http(url);
  const id = `${RUN}-victim`;
  await ok(victim, 'file_write', { computer_id: id, path: '/tmp/secret', content: 'secret-content' });
  for (const [name, args] of [['file_read', { path: '/tmp/secret' }], ['file_write', { path: '/tmp/secret', content: 'stolen' }],
    ['file_edit', { path: '/tmp/secret', old_string: 'secret', new_string: 'stolen' }]]) {
    const r = await call(thief, name, { computer_id: id, ...args });
    assert.equal(r.isError, true, name);
    assert.match(r.content[0].text, /Temporary computer already has an active sandbox_handle/, name);
    assert.doesNotMatch(JSON.stringify(r), /secret-content/);
  }
  // 2026: a made-up handle, and its own handle with the victim's computer id
  const modern = await v2Http(url);
  await refused(modern, 'file_read', { sandbox_handle: 'a'.repeat(43), path: '/tmp/secret' }, /Unknown or expired sandbox_handle/);
  const mine = await ok(modern, 'file_write', { path: '/tmp/mine.bin', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  for (const name of ['file_read', 'file_write', 'file_edit']) {
    const r = await call(modern, name, { sandbox_handle: mine.sandbox_handle, computer_id: id, path: '/tmp/secret', content: 'x', old_string: 's', new_string: 'x' });
    assert.equal(r.isError, true, name);
    assert.match(r.content[0].text, /computer_id does not match sandbox_handle/, name);
  }
  // the modern agent's own file, through its handle (2026-07-28 round trip)
  const rr = await call(modern, 'file_read', { sandbox_handle: mine.sandbox_handle, path: '/tmp/mine.bin' });
  assert.equal(rr.isError, false, JSON.stringify(rr));
  assert.ok(Buffer.from(rr.content.find((x) => x.type === 'resource').resource.blob, 'base64').equals(Buffer.from([0, 1, 2, 255])));
  assert.equal(rr.structuredContent.sha256, mine.sha256);
  await ok(modern, 'file_write', { sandbox_handle: mine.sandbox_handle, path: '/tmp/t.txt', content: 'one two' });
  const me = await ok(modern, 'file_edit', { sandbox_handle: mine.sandbox_handle, path: '/tmp/t.txt', old_string: 'two', new_string: 'three' });
  assert.equal(me.sha256, sha('one three'));
  // a 2025 agent cannot reach the modern agent's computer
  const cross = await call(victim, 'file_read', { computer_id: mine.computer_id, path: '/tmp/t.txt' });
  assert.equal(cross.isError, true);
  // the victim's file is untouched
  assert.equal((await ok(victim, 'file_read', { computer_id: id, path: '/tmp/secret' })).content, 'secret-content');
});

test('the switch: without files the tools are absent', async () => {
  const c = await stdioV1([`--docker-run-flag=--label=msc.files-test=${RUN}`]);
  assert.deepEqual((await c.listTools()).tools.map((x) => x.name), ['terminal_execute', 'computer_release']);
  await refused(c, 'file_read', { path: '/etc/hostname' }, /Unknown tool: file_read/);
  await c.close();
  // go_busybox runs them on the host side: files_wasm.test.mjs
});
