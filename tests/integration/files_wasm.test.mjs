// The file tools (issue 29, --tools files) on go_busybox, through the official MCP SDK: the runner
// runs the exec helper's own file commands on the host side, confined to the computer's folder
// with openat2(RESOLVE_IN_ROOT), so the answers are the Docker version's (tests/integration/
// files.test.mjs). Here: round trips, the edit rules, refused fifos and sockets, symlink escapes
// planted from the host, the disk quota, and another agent's refusal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, cid, run, MSC_BIN, waitFor, waitExit } from './lib.mjs';

let state;          // KILNTAINERS_WASM_DIR of this run
let outside;        // a host folder beside the computers that no file tool may touch
const procs = new Set();
const clients = new Set();
before(() => {
  state = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-files-'));
  outside = path.join(state, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret\n');
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
const busybox = (flags = []) => startServer(['--backend', 'go_busybox', '--tools', 'files', ...flags], { env: env() });
const rootOf = (id) => path.join(state, 'go_busybox', id, 'root');
const sha = (b) => createHash('sha256').update(b).digest('hex');

async function ok(c, name, args) {
  const res = await c.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  assert.equal(res.isError, false, `${name}: ${JSON.stringify(res).slice(0, 2000)}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, 'text and structuredContent agree');
  return res.structuredContent;
}
async function refused(c, name, args, re) {
  const res = await c.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)}: ${JSON.stringify(res).slice(0, 500)}`);
  assert.match(res.content[0].text, re);
  return res.content[0].text;
}
const assertOutsideUntouched = () => {
  assert.deepEqual(fs.readdirSync(outside).sort(), ['secret.txt'], 'nothing planted outside');
  assert.equal(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'host secret\n');
};

test('go_busybox: round trips, edits and refusals as on Docker', async () => {
  const s = await busybox();
  const c = s.client;
  try {
    const id = cid('bb-files');
    const at = { computer_id: id };
    assert.deepEqual((await c.listTools()).tools.map((t) => t.name), ['terminal_execute', 'computer_release', 'file_read', 'file_write', 'file_edit', 'computer_upload', 'computer_download']);
    const text = `quotes ' " \` $HOME $(id) \\ back\nsecond line\ttab\n\u00e9\u4e16\u{1f600}\r\nend`;
    const w = await ok(c, 'file_write', { ...at, path: '/t/a.txt', content: text, make_dirs: true });
    assert.deepEqual([w.size, w.sha256, w.created, w.mode, w.path], [Buffer.byteLength(text), sha(text), true, '0644', '/t/a.txt']);
    assert.equal(fs.readFileSync(path.join(rootOf(id), 't', 'a.txt'), 'utf8'), text, 'the bytes in the computer\'s folder');
    const r = await ok(c, 'file_read', { ...at, path: '/t/a.txt' });
    assert.deepEqual([r.content, r.sha256, r.size, r.binary, r.total_lines, r.more], [text, sha(text), w.size, false, 4, false]);
    // the guest sees what the host side wrote, and the host side what the guest wrote
    assert.equal((await s.exec({ ...at, args: ['cat', '/t/a.txt'] })).stdout, text);
    await s.exec({ ...at, command: 'printf "from guest\\n" > /t/g.txt' });
    assert.equal((await ok(c, 'file_read', { ...at, path: 't/g.txt' })).content, 'from guest\n', 'relative to the working folder /');

    // binary through base64, as an embedded resource
    const bytes = Buffer.from([...Array(256).keys(), ...Array(256).keys()].reverse());
    const wb = await ok(c, 'file_write', { ...at, path: '/t/all.bin', content: bytes.toString('base64'), encoding: 'base64', mode: '0600' });
    assert.deepEqual([wb.sha256, wb.size, wb.mode], [sha(bytes), 512, '0600']);
    assert.equal(fs.statSync(path.join(rootOf(id), 't', 'all.bin')).mode & 0o777, 0o600);
    const rb = await c.callTool({ name: 'file_read', arguments: { ...at, path: '/t/all.bin' } });
    assert.equal(rb.isError, false, JSON.stringify(rb));
    assert.equal(rb.structuredContent.binary, true);
    const blob = rb.content.find((x) => x.type === 'resource');
    assert.equal(blob.resource.uri, 'file:///t/all.bin');
    assert.ok(Buffer.from(blob.resource.blob, 'base64').equals(bytes), 'byte-identical');
    // a rewrite keeps the mode; no temporary file is left
    assert.equal((await ok(c, 'file_write', { ...at, path: '/t/all.bin', content: 'x' })).mode, '0600');
    assert.deepEqual(fs.readdirSync(path.join(rootOf(id), 't')).filter((n) => n.startsWith('.kiln-')), []);

    // folders, `..` clamped at the root as the kernel does there, pages
    await refused(c, 'file_write', { ...at, path: '/t/x/y/z.txt', content: 'z' }, /the folder x does not exist \(make_dirs: true makes it\)/);
    await ok(c, 'file_write', { ...at, path: '/t/x/y/z.txt', content: 'z', make_dirs: true });
    assert.equal((await ok(c, 'file_read', { ...at, path: '/../../t/x/../x/y/z.txt' })).content, 'z');
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    await ok(c, 'file_write', { ...at, path: '/t/long.txt', content: lines });
    const p1 = await ok(c, 'file_read', { ...at, path: '/t/long.txt', offset: 3, limit: 2, line_numbers: true });
    assert.deepEqual([p1.content, p1.next_offset, p1.more, p1.total_lines], ['     3\tline 3\n     4\tline 4\n', 5, true, 300]);

    // the edit rules
    await ok(c, 'file_write', { ...at, path: '/t/e.py', content: 'a = 1\nb = 1\nprint(a)\n' });
    const e0 = await ok(c, 'file_read', { ...at, path: '/t/e.py' });
    const e1 = await ok(c, 'file_edit', { ...at, path: '/t/e.py', old_string: 'a = 1', new_string: 'a = "$(two)"', expected_sha256: e0.sha256 });
    const after1 = 'a = "$(two)"\nb = 1\nprint(a)\n';
    assert.deepEqual([e1.replacements, e1.sha256_before, e1.sha256, e1.size], [1, e0.sha256, sha(after1), Buffer.byteLength(after1)]);
    await refused(c, 'file_edit', { ...at, path: '/t/e.py', old_string: ' = ', new_string: '=' }, /old_string occurs 2 times in the file; nothing was changed/);
    await refused(c, 'file_edit', { ...at, path: '/t/e.py', old_string: 'nope', new_string: 'x' }, /old_string was not found in the file; nothing was changed/);
    await refused(c, 'file_edit', { ...at, path: '/t/e.py', old_string: 'b = 1', new_string: 'b = 2', expected_sha256: e0.sha256 },
      new RegExp(`the file changed since it was read: its sha256 is ${e1.sha256}, not the expected ${e0.sha256}; nothing was changed`));
    assert.equal(fs.readFileSync(path.join(rootOf(id), 't', 'e.py'), 'utf8'), after1, 'the refused edits changed nothing');
    assert.equal((await ok(c, 'file_edit', { ...at, path: '/t/e.py', old_string: ' = ', new_string: ' := ', replace_all: true })).replacements, 2);

    // fifos (at once), sockets and folders refused
    const t = path.join(rootOf(id), 't');
    assert.equal((await run('mkfifo', [path.join(t, 'fifo')])).code, 0);
    const sock = net.createServer().listen(path.join(t, 'sock'));
    await new Promise((res) => sock.once('listening', res));
    const t0 = Date.now();
    await refused(c, 'file_read', { ...at, path: '/t/fifo' }, /refused: it is a fifo/);
    await refused(c, 'file_write', { ...at, path: '/t/fifo', content: 'x' }, /refused: it is a fifo/);
    assert.ok(Date.now() - t0 < 10000, 'no wait on the fifo');
    await refused(c, 'file_read', { ...at, path: '/t/sock' }, /refused: it is a socket/);
    sock.close();
    await refused(c, 'file_read', { ...at, path: '/t' }, /refused: it is a folder/);
    await refused(c, 'file_read', { ...at, path: '/t/none' }, /\/t\/none: no such file/);

    // symlinks inside the root are followed there
    fs.symlinkSync('/t/x/y/z.txt', path.join(t, 'inside'));
    const viaLink = await ok(c, 'file_read', { ...at, path: '/t/inside' });
    assert.deepEqual([viaLink.content, viaLink.path], ['z', '/t/x/y/z.txt']);
    await ok(c, 'file_write', { ...at, path: '/t/inside', content: 'through the link' });
    assert.equal(fs.readFileSync(path.join(t, 'x', 'y', 'z.txt'), 'utf8'), 'through the link');
    assert.ok(fs.lstatSync(path.join(t, 'inside')).isSymbolicLink(), 'the link stays a link');

    // attack: symlinks planted toward the host's files (absolute, relative, a folder) never
    // leave the root: they resolve inside it, where nothing is
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(t, 'abs'));
    fs.symlinkSync('../../../outside/secret.txt', path.join(t, 'rel'));
    fs.symlinkSync(outside, path.join(t, 'dir'));
    fs.symlinkSync('/proc/self/environ', path.join(t, 'env'));
    for (const p of ['/t/abs', '/t/rel', '/t/env']) {
      const msg = await refused(c, 'file_read', { ...at, path: p }, /a symlink to a missing file/);
      assert.doesNotMatch(msg, /host secret/);
      await refused(c, 'file_write', { ...at, path: p, content: 'pwned' }, /a symlink to a missing file/);
      await refused(c, 'file_edit', { ...at, path: p, old_string: 'host', new_string: 'pwned' }, /a symlink to a missing file/);
    }
    await refused(c, 'file_read', { ...at, path: '/t/dir/secret.txt' }, /the folder dir does not exist/);
    // make_dirs makes no folder through the link (a dangling link there, as Docker says)
    await refused(c, 'file_write', { ...at, path: '/t/dir/planted.txt', content: 'x', make_dirs: true }, /the folder dir does not exist/);
    // a guest-made link to a folder resolves in the root too
    await s.exec({ ...at, args: ['mkdir', '-p', `${outside}`] });
    const planted = await ok(c, 'file_write', { ...at, path: '/t/dir/planted.txt', content: 'x' });
    assert.deepEqual([planted.created, planted.path], [true, '/t/dir/planted.txt']);
    assert.ok(fs.existsSync(path.join(rootOf(id), outside, 'planted.txt')), 'made inside the root');
    assertOutsideUntouched();
  } finally { await s.close(); }
});

test('go_busybox: file_write is bounded by the computer\'s disk quota', async () => {
  const s = await busybox(['--disk-quota', '256K']);
  const c = s.client;
  try {
    const at = { computer_id: cid('bb-files-quota') };
    await ok(c, 'file_write', { ...at, path: '/keep.txt', content: 'kept' });
    await refused(c, 'file_write', { ...at, path: '/keep.txt', content: randomBytes(400 * 1024).toString('base64'), encoding: 'base64' },
      /no space left on the computer's disk; nothing was changed/);
    await refused(c, 'file_write', { ...at, path: '/new.bin', content: randomBytes(400 * 1024).toString('base64'), encoding: 'base64' },
      /no space left on the computer's disk; nothing was changed/);
    const root = rootOf(at.computer_id);
    assert.equal(fs.readFileSync(path.join(root, 'keep.txt'), 'utf8'), 'kept');
    assert.deepEqual(fs.readdirSync(root).filter((n) => n !== 'tmp').sort(), ['keep.txt'], 'no temporary file or new file left');
    assert.equal((await ok(c, 'file_write', { ...at, path: '/small.bin', content: randomBytes(64 * 1024).toString('base64'), encoding: 'base64' })).size, 65536);
  } finally { await s.close(); }
});

const freePort = () => new Promise((resolve, reject) => {
  const srv = net.createServer();
  srv.once('error', reject);
  srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
});

test('attack: another agent cannot read or write a go_busybox computer\'s files (2025 sessions and 2026 handles)', async () => {
  const port = await freePort();
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), '--backend', 'go_busybox', '--tools', 'files'],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env() } });
  procs.add(proc);
  assert.ok(await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 }), 'server not ready');
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const v1 = async () => { const c = new ClientV1({ name: 'wasm-files', version: '1' }, { capabilities: {} }); clients.add(c); await c.connect(new HttpV1(url)); return c; };
  const victim = await v1();
  const thief = await v1();
  const id = cid('bb-victim');
  await ok(victim, 'file_write', { computer_id: id, path: '/secret', content: 'secret-content' });
  for (const [name, args] of [['file_read', { path: '/secret' }], ['file_write', { path: '/secret', content: 'stolen' }],
    ['file_edit', { path: '/secret', old_string: 'secret', new_string: 'stolen' }]]) {
    const msg = await refused(thief, name, { computer_id: id, ...args }, /Temporary computer already has an active sandbox_handle/);
    assert.doesNotMatch(msg, /secret-content/);
  }
  const modern = new ClientV2({ name: 'wasm-files', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(modern);
  await modern.connect(new HttpV2(url));
  const mine = await ok(modern, 'file_write', { path: '/mine.txt', content: 'one two' });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  await refused(modern, 'file_read', { sandbox_handle: mine.sandbox_handle, computer_id: id, path: '/secret' }, /computer_id does not match sandbox_handle/);
  assert.equal((await ok(modern, 'file_edit', { sandbox_handle: mine.sandbox_handle, path: '/mine.txt', old_string: 'two', new_string: 'three' })).sha256, sha('one three'));
  assert.equal((await ok(victim, 'file_read', { computer_id: id, path: '/secret' })).content, 'secret-content');
});

test('wasm (a user\'s WASI module): the same file tools, in its computer\'s folder', { skip: !process.env.PROBE_WASM }, async () => {
  const s = await startServer(['--backend', 'wasm', '--wasm-path', process.env.PROBE_WASM, '--tools', 'files'], { env: env() });
  const c = s.client;
  try {
    const at = { computer_id: cid('wasm-files') };
    const w = await ok(c, 'file_write', { ...at, path: 'data/x.txt', content: 'from the host side\n', make_dirs: true });
    assert.deepEqual([w.path, w.sha256], ['/data/x.txt', sha('from the host side\n')]);
    const root = path.join(state, 'wasm', at.computer_id, 'root');
    assert.equal(fs.readFileSync(path.join(root, 'data', 'x.txt'), 'utf8'), 'from the host side\n');
    assert.equal((await ok(c, 'file_edit', { ...at, path: '/data/x.txt', old_string: 'host', new_string: 'runner' })).replacements, 1);
    assert.equal((await ok(c, 'file_read', { ...at, path: '/data/x.txt' })).content, 'from the runner side\n');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'esc'));
    await refused(c, 'file_read', { ...at, path: '/esc' }, /a symlink to a missing file/);
    assertOutsideUntouched();
  } finally { await s.close(); }
});
