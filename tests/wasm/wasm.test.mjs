// The WebAssembly backends through the official MCP client: go_busybox (our toolbox module and
// its shell) and wasm (a user's WASI module, tests/wasm/guest/probe.c): the reference's acceptance
// cases, escapes, the fuel, memory, timeout and output limits, and the computers' folders
// (temporary ones removed at session end, permanent ones found again after a restart).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { spawn } from 'node:child_process';
import net from 'node:net';
import {
  startServer, cid, assertReplyShape, assertToolError, TIMEOUT_MARKER, LIMIT_MARKER, run, MSC_BIN,
  TOOL, waitFor,
} from '../integration/lib.mjs';

const PROBE = process.env.PROBE_WASM;
let state;          // KILNTAINERS_WASM_DIR of this run
let outside;        // a host folder next to it that no guest may touch

before(() => {
  state = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-test-'));
  outside = path.join(state, 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret\n');
});
after(() => fs.rmSync(state, { recursive: true, force: true }));

const env = () => ({ KILNTAINERS_WASM_DIR: state, HOME: state });
const busybox = (flags = []) => startServer(['--backend', 'go_busybox', ...flags], { env: env() });
const wasm = (flags = []) => startServer(['--backend', 'wasm', '--wasm-path', PROBE, ...flags], { env: env() });
const folder = (backend, id) => path.join(state, backend, id);

describe('go_busybox backend', () => {
  it('describes itself: Busybox, args, ls, grep', async () => {
    const s = await busybox();
    try {
      const { tools } = await s.client.listTools();
      const d = tools.find((t) => t.name === 'terminal_execute').description;
      for (const w of ['Busybox', 'args', 'ls', 'grep', 'pipes']) assert.ok(d.includes(w), `${w} in ${d}`);
    } finally { await s.close(); }
  });

  it('passes the reference acceptance cases', async () => {
    const s = await busybox();
    try {
      const base = { computer_id: cid('bb-accept') };
      const ok = async (args, extra = {}) => assertReplyShape(await s.call({ ...base, args, ...extra }));
      let r = await ok(['tee', 'test.txt'], { stdin: 'hello wasm\nsecond line\n' });
      assert.equal(r.exit_code, 0);
      r = await ok(['cat', 'test.txt']);
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['hello wasm\nsecond line\n', '', 0]);
      r = await ok(['ls', '-la']);
      assert.match(r.stdout, /test\.txt/);
      await ok(['tee', 'a.txt'], { stdin: 'A\n' });
      await ok(['tee', 'b.txt'], { stdin: 'B\n' });
      r = await ok(['cat', 'a.txt', 'b.txt']);
      assert.equal(r.stdout, 'A\nB\n');
      r = await ok(['grep', 'hello', 'test.txt']);
      assert.deepEqual([r.stdout, r.exit_code], ['hello wasm\n', 0]);
      r = await ok(['grep', '-r', 'wasm', '.']);
      assert.match(r.stdout, /test\.txt:hello wasm/);
      r = await ok(['cat'], { stdin: 'from stdin' });
      assert.equal(r.stdout, 'from stdin');
      r = await ok(['echo', 'hello', 'world']);
      assert.equal(r.stdout, 'hello world\n');
      await ok(['seq', '1', '10'], {});
      r = assertReplyShape(await s.call({ ...base, command: 'seq 1 10 > n.txt' }));
      r = await ok(['head', '-n', '3', 'n.txt']);
      assert.equal(r.stdout, '1\n2\n3\n');
      r = await ok(['tail', '-n', '3', 'n.txt']);
      assert.equal(r.stdout, '8\n9\n10\n');
      r = await ok(['wc', '-l', 'test.txt']);
      assert.match(r.stdout.trim(), /^2\b/);
      r = await ok(['wc', '-l'], { stdin: 'x\ny\n' });
      assert.equal(r.stdout.trim(), '2');
      assert.equal((await ok(['mkdir', 'sub'])).exit_code, 0);
      assert.match((await ok(['ls'])).stdout, /sub/);
      assert.equal((await ok(['rmdir', 'sub'])).exit_code, 0);
      assert.doesNotMatch((await ok(['ls'])).stdout, /sub/);
      r = await ok(['grep', 'x', 'nonexistentfile.txt']);
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /nonexistentfile\.txt/);
      r = await ok(['nosuchapplet']);
      assert.equal(r.exit_code, 2);
      assert.match(r.stderr, /applet not found: nosuchapplet/);
      r = await ok(['--list']);
      for (const a of ['ls', 'cat', 'grep', 'sed', 'awk', 'sort', 'find', 'xargs']) {
        assert.ok(r.stdout.split('\n').includes(a), `${a} listed`);
      }
    } finally { await s.close(); }
  });

  it('runs shell lines: pipes, redirections, &&, ||, globs, variables', async () => {
    const s = await busybox();
    try {
      const base = { computer_id: cid('bb-shell') };
      const sh = async (command, extra = {}) => assertReplyShape(await s.call({ ...base, command, ...extra }));
      let r = await sh('echo hello | tr a-z A-Z');
      assert.deepEqual([r.stdout, r.exit_code], ['HELLO\n', 0]);
      r = await sh('printf "b\\na\\nc\\na\\n" | sort | uniq -c | sort -rn | head -n 1');
      assert.match(r.stdout, /^\s*2 a\n$/);
      r = await sh('echo one > f1.txt && echo two >> f1.txt; cat f1.txt');
      assert.equal(r.stdout, 'one\ntwo\n');
      r = await sh('false || echo fallback; false && echo never; echo $?');
      assert.equal(r.stdout, 'fallback\n1\n');
      r = await sh('echo x > g1.log; echo y > g2.log; ls *.log');
      assert.equal(r.stdout, 'g1.log\ng2.log\n');
      r = await sh('cat missing.txt 2>&1 | grep -c missing');
      assert.equal(r.stdout, '1\n');
      r = await sh('awk \'{s += $1} END {print s}\'', { stdin: '1\n2\n3\n' });
      assert.equal(r.stdout, '6\n');
      r = await sh('sed -e s/world/wasm/ ', { stdin: 'hello world\n' });
      assert.equal(r.stdout, 'hello wasm\n');
      r = await sh('NAME=agent; echo "hi $NAME"');
      assert.equal(r.stdout, 'hi agent\n');
      r = await sh('nosuchcmd');
      assert.equal(r.exit_code, 127);
      r = await sh('pwd', { working_directory: '/work/deep' });
      assert.equal(r.stdout, '/work/deep\n');
      r = await sh('exit 7');
      assert.equal(r.exit_code, 7);
    } finally { await s.close(); }
  });

  it('keeps every path inside the computer', async () => {
    const s = await busybox();
    try {
      const id = cid('bb-escape');
      const base = { computer_id: id };
      const sh = async (command, extra = {}) => assertReplyShape(await s.call({ ...base, command, ...extra }));
      let r = await sh('pwd', { working_directory: '/../../..' });
      assert.equal(r.stdout, '/\n');
      r = await sh('ls /../../..; ls ../../..');
      assert.doesNotMatch(r.stdout, /outside|go_busybox|etc/);
      r = await sh('cat /etc/hostname /proc/self/environ');
      assert.notEqual(r.exit_code, 0);
      r = await sh(`cat ${outside}/secret.txt ../../../outside/secret.txt`);
      assert.notEqual(r.exit_code, 0);
      assert.doesNotMatch(r.stdout, /host secret/);
      // A link made by the guest resolves inside the computer, and so does one made on the host.
      r = await sh('ln -s ../../../../outside up && cat up/secret.txt; ln -s /etc etc2; ls etc2');
      assert.doesNotMatch(r.stdout, /host secret|passwd/);
      fs.symlinkSync(outside, path.join(folder('go_busybox', id), 'root', 'hostlink'));
      r = await sh('cat hostlink/secret.txt');
      assert.notEqual(r.exit_code, 0);
      r = await sh('echo pwned > ../../../outside/new.txt; rm -rf ../../../outside');
      assert.ok(fs.existsSync(path.join(outside, 'secret.txt')));
      assert.ok(!fs.existsSync(path.join(outside, 'new.txt')));
      assert.ok(!fs.existsSync(path.join(state, 'go_busybox', 'work')), 'no folders made outside');
    } finally { await s.close(); }
  });

  it('ends runaway commands: timeout 124, output limit, memory', async () => {
    const s = await busybox(['--output-limit', '5000', '--wasm-max-memory', '32']);
    try {
      const base = { computer_id: cid('bb-limits') };
      const t0 = Date.now();
      let r = assertReplyShape(await s.call({ ...base, command: 'sleep 30', timeout: 1 }));
      assert.equal(r.exit_code, 124);
      assert.ok(r.stderr.includes(TIMEOUT_MARKER(1)));
      assert.ok(Date.now() - t0 < 10000);
      r = assertReplyShape(await s.call({ ...base, args: ['awk', 'BEGIN { while (1) x++ }'], timeout: 1 }));
      assert.equal(r.exit_code, 124);
      r = assertReplyShape(await s.call({ ...base, args: ['seq', '1', '100000'] }));
      assert.equal(r.stdout, '');
      assert.ok(r.stderr.includes(LIMIT_MARKER(5000)));
      r = assertReplyShape(await s.call({ ...base, args: ['awk', 'BEGIN { s = "xxxxxxxxxxxxxxxx"; while (1) s = s s }'], timeout: 20 }));
      assert.notEqual(r.exit_code, 0);
      assert.notEqual(r.exit_code, 124, 'memory runs out before the deadline');
      r = assertReplyShape(await s.call({ ...base, args: ['echo', 'still fine'] }));
      assert.equal(r.stdout, 'still fine\n');
    } finally { await s.close(); }
  });

  it('greps a file larger than its memory, in windows of whole lines', async () => {
    const s = await busybox(['--wasm-max-memory', '16']);
    try {
      const base = { computer_id: cid('bb-bigfile') };
      let r = assertReplyShape(await s.call({ ...base, command: 'seq 1 4000000 > f; wc -c < f', timeout: 120 }));
      assert.equal(r.stdout.trim(), '30888896', 'a 30 MB file: twice the memory');
      // lines containing 99999: 99999, 199999, ..., 3999990-3999999, 999990-999999, ...
      let want = 0;
      for (let i = 1; i <= 4000000; i++) if (String(i).includes('99999')) want++;
      r = assertReplyShape(await s.call({ ...base, args: ['grep', '-c', '99999', 'f'], timeout: 120 }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], [`${want}\n`, '', 0]);
      r = assertReplyShape(await s.call({ ...base, args: ['grep', '-n', '-B1', '^3999999$', 'f'], timeout: 120 }));
      assert.equal(r.stdout, '3999998-3999998\n3999999:3999999\n');
      // A line longer than the windows (1 MiB, grown as it needs), with a regex
      r = assertReplyShape(await s.call({ ...base,
        command: 'awk \'BEGIN { while (i++ < 3000000) printf "a"; print ""; print "b" }\' > g; grep -c \'^a*$\' g; grep -n b g',
        timeout: 120 }));
      assert.deepEqual([r.stdout, r.exit_code], ['1\n2:b\n', 0]);
      // head -n -N / -c -N stream (only the last N are held), as GNU head
      r = assertReplyShape(await s.call({ ...base,
        command: 'head -n -2 f > h; wc -l < h; tail -n 1 h; head -c -3 f > h; wc -c < h', timeout: 120 }));
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['3999998\n3999998\n30888893\n', '', 0]);
    } finally { await s.close(); }
  });

  it('removes temporary folders at session end and keeps permanent ones across restarts', async () => {
    const tmpId = cid('bb-tmp');
    const permId = cid('bb-perm');
    let s = await busybox();
    try {
      assertReplyShape(await s.call({ computer_id: tmpId, command: 'echo t > t.txt' }));
      assertReplyShape(await s.call({ computer_id: permId, temporary: false, command: 'echo kept > p.txt' }));
      assert.ok(fs.existsSync(folder('go_busybox', tmpId)));
    } finally { await s.close(); }
    assert.ok(!fs.existsSync(folder('go_busybox', tmpId)), 'temporary folder removed');
    assert.ok(fs.existsSync(path.join(folder('go_busybox', permId), 'root', 'p.txt')));
    s = await startServer(['--backend', 'go_busybox'], { env: { ...env(), ENABLE_LIFECYCLE_TOOLS: 'true' } });
    try {
      const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
      assert.match(JSON.stringify(list.structuredContent), new RegExp(permId));
      const r = assertReplyShape(await s.call({ computer_id: permId, temporary: false, args: ['cat', 'p.txt'] }));
      assert.equal(r.stdout, 'kept\n');
      const del = await s.client.callTool({ name: 'computer_delete', arguments: { computer_id: permId } });
      assert.ok(!del.isError, JSON.stringify(del));
    } finally { await s.close(); }
    assert.ok(!fs.existsSync(folder('go_busybox', permId)), 'deleted folder removed');
  });
});

/** Bytes the files under dir take on the host's disk (allocated blocks, as du counts). */
function hostBytes(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += fs.lstatSync(p).blocks * 512;
    if (e.isDirectory()) total += hostBytes(p);
  }
  return total;
}

describe('disk quota (issue 27)', () => {
  const MiB = 1024 * 1024;

  it('go_busybox: a computer stops at its disk quota across commands, and the host keeps its space', async () => {
    // The environment form (an older server ignores it: the attack itself is what fails there).
    const s = await startServer(['--backend', 'go_busybox', '--reply-output-limit', '0'],
      { env: { ...env(), KILNTAINERS_DISK_QUOTA: '8M' } });
    try {
      const base = { computer_id: cid('bb-quota'), temporary: false };
      const root = path.join(folder('go_busybox', base.computer_id), 'root');
      // 23 MB of output into one file: cut at the quota (seq fails without a message).
      let r = assertReplyShape(await s.call({ ...base, command: 'seq 1 3000000 > big' }));
      assert.notEqual(r.exit_code, 0, JSON.stringify(r));
      const big = fs.statSync(path.join(root, 'big')).size;
      assert.ok(big > 7 * MiB && big <= 8 * MiB, `big is ${big} bytes`);
      assert.ok(hostBytes(root) <= 8 * MiB + 64 * 1024, `host bytes ${hostBytes(root)}`);
      // A new command (a new runner) reads the usage from the folder: still full.
      r = assertReplyShape(await s.call({ ...base, command: 'seq 1 100000 > more' }));
      assert.match(r.stderr, /No space left on device/, JSON.stringify(r).slice(0, 600));
      r = assertReplyShape(await s.call({ ...base, command: 'mkdir d' }));
      assert.match(r.stderr, /No space left on device/, JSON.stringify(r).slice(0, 600));
      assert.ok(hostBytes(root) <= 8 * MiB + 64 * 1024, `host bytes ${hostBytes(root)}`);
      // Freed space is free again, in the same command.
      r = assertReplyShape(await s.call({ ...base, command: 'rm big && seq 1 1000 > small && wc -l small' }));
      assert.equal(r.exit_code, 0, JSON.stringify(r));
      assert.match(r.stdout, /1000 small/);
      // Many empty files cost a block each: 8 MiB holds about 2048 of them.
      r = assertReplyShape(await s.call({ ...base, command: 'mkdir many && cd many && seq 1 4000 | xargs touch' }));
      assert.match(r.stderr, /No space left on device/, JSON.stringify(r).slice(0, 600));
      const n = fs.readdirSync(path.join(root, 'many')).length;
      assert.ok(n > 1000 && n <= 2048, `${n} files made`);
      r = assertReplyShape(await s.call({ ...base, args: ['echo', 'still serving'] }));
      assert.equal(r.stdout, 'still serving\n');
    } finally { await s.close(); }
  });

  it('go_busybox: the quota defaults to 1 GiB, --disk-quota sets it, and computer_list says it', async () => {
    for (const [flags, want] of [[[], '1 GiB'], [['--disk-quota', '1.5GiB'], '1536 MiB']]) {
      const s = await startServer(['--backend', 'go_busybox', ...flags], { env: { ...env(), ENABLE_LIFECYCLE_TOOLS: 'true' } });
      try {
        const id = cid('bb-quota-list');
        assertReplyShape(await s.call({ computer_id: id, command: 'echo x > x' }));
        const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
        const row = list.structuredContent.computers.find((c) => c.computer_id === id);
        assert.equal(row?.disk, want, JSON.stringify(list.structuredContent));
      } finally { await s.close(); }
    }
  });

  it('wasm: a sparse file costs its blocks, and filling its holes stops at the quota', async () => {
    const s = await startServer(['--backend', 'wasm', '--wasm-path', PROBE],
      { env: { ...env(), KILNTAINERS_DISK_QUOTA: '8MiB' } });
    try {
      const base = { computer_id: cid('w-quota'), temporary: false };
      const root = path.join(folder('wasm', base.computer_id), 'root');
      // 1 GiB long, a 4 KiB block every 64 KiB: 64 MiB of blocks if nothing stops it.
      const r = assertReplyShape(await s.call({ ...base, args: ['sparse', 'holes', '1024'] }));
      assert.equal(r.exit_code, 4, JSON.stringify(r));
      assert.match(r.stdout, /wrote (\d+) blocks: (No space left on device|short write)/);
      const n = Number(/wrote (\d+)/.exec(r.stdout)[1]);
      assert.ok(n > 1000 && n <= 2048, `${n} blocks`);
      assert.ok(hostBytes(root) <= 8 * MiB + 64 * 1024, `host bytes ${hostBytes(root)}`);
      assert.equal(fs.statSync(path.join(root, 'holes')).size, 1024 * MiB, 'the hole itself was allowed');
    } finally { await s.close(); }
  });

  it('refuses a --disk-quota that is no size', async () => {
    const r = await run(MSC_BIN, ['--backend', 'go_busybox', '--disk-quota', 'lots'], { env: { ...process.env, ...env() } });
    assert.equal(r.code, 1, JSON.stringify(r));
    assert.match(r.stderr, /--disk-quota: invalid value: 'lots'/);
  });
});

describe('go_busybox leases', () => {
  it('kill -9: the next server removes the temporary folder at once, keeps the permanent one, and leaves one a live server holds', async () => {
    const tmpId = cid('lease-tmp');
    const liveId = cid('lease-live');
    const permId = cid('lease-perm');
    const a = await busybox();
    const b = await busybox();
    try {
      assertReplyShape(await a.call({ computer_id: tmpId, command: 'echo t > t.txt' }));
      assertReplyShape(await a.call({ computer_id: permId, temporary: false, command: 'echo kept > p.txt' }));
      assertReplyShape(await b.call({ computer_id: liveId, command: 'echo l > l.txt' }));
      a.proc.kill('SIGKILL');
      await new Promise((r) => a.proc.once('exit', r));
      assert.ok(fs.existsSync(folder('go_busybox', tmpId)), 'nothing ends a folder by itself');
      const c = await busybox();
      await c.close();
      assert.ok(!fs.existsSync(folder('go_busybox', tmpId)), 'the orphaned temporary folder is removed at start');
      assert.ok(fs.existsSync(path.join(folder('go_busybox', permId), 'root', 'p.txt')), 'the permanent folder is kept');
      const r = assertReplyShape(await b.call({ computer_id: liveId, args: ['cat', 'l.txt'] }));
      assert.equal(r.stdout, 'l\n', 'a live server\'s temporary is untouched');
    } finally { await a.close(); await b.close(); }
    fs.rmSync(folder('go_busybox', permId), { recursive: true, force: true });
  });
});

// Issue 27: SIGTERM while thousands of MCP tasks ran took 22-29 s, left computer folders and
// runners orphaned under init, and crashed (the session service, freed after a 20 s wait, was
// called back as the fleet closed); then, with the crash fixed, it still left 2-3k folders for the
// next start to remove. 400 tasks (one handle and temporary computer each, stateless HTTP at
// 2026-07-28) on the default 64 driver workers keep the driver's queue full as thousands do.
describe('go_busybox: SIGTERM with tasks running', () => {
  const MODERN = '2026-07-28';
  const META = { 'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
  const N = Number(process.env.MSC_TERM_TASKS || 400);
  const freePort = () => new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
  // The live processes whose command line names `dir` (the runners get --root <dir>/...).
  const processesOf = (dir) => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      return !/\) Z /.test(stat) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir);
    } catch { return false; }
  });

  // Every computer folder under dir, the hidden ones of a removal (.gone-*, .new-*) too.
  const leftovers = (dir) => fs.readdirSync(path.join(dir, 'go_busybox')).filter((n) => n !== '.snapshots');

  it('exits within 5 s, cleanly, leaving no computer folder and no process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-term-'));
    const port = await freePort();
    const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port),
      '--backend', 'go_busybox', '--timeout', '300', '--max-address-connections', '1024', ...(process.env.MSC_TERM_FLAGS || '').split(' ').filter(Boolean)],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, KILNTAINERS_WASM_DIR: dir, HOME: dir } });
    let err = '';
    proc.stderr.on('data', (c) => { err = (err + c).slice(-200000); });
    const exited = new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal })));
    try {
      assert.ok(await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok,
        { timeoutMs: 20000, intervalMs: 100 }), `server not ready: ${err}`);
      const call = async () => {
        const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': TOOL },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
            params: { name: TOOL, arguments: { command: 'sleep 300' }, _meta: META } }) });
        const text = await res.text();
        return res.headers.get('content-type')?.startsWith('text/event-stream')
          ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6)) : JSON.parse(text);
      };
      const replies = await Promise.all(Array.from({ length: N }, call));
      for (const r of replies) assert.equal(r.result?.resultType, 'task', JSON.stringify(r));
      const folders = () => leftovers(dir);
      process.stderr.write(`${folders().length} temporary computers before SIGTERM\n`);
      assert.ok(folders().length > 0, 'temporary computers (the others wait for a worker)');
      assert.ok(processesOf(dir).length > 0, 'runners run the tasks');
      const t0 = Date.now();
      proc.kill('SIGTERM');
      let timer;
      const end = await Promise.race([exited, new Promise((r) => { timer = setTimeout(() => r(null), 30000); })]);
      clearTimeout(timer);   // a pending timer would hold this file's process for the rest of its 30 s
      const took = Date.now() - t0;
      assert.ok(end, 'the server exits');
      assert.deepEqual(end, { code: 0, signal: null }, `a clean exit: ${err.slice(-3000)}`);
      assert.doesNotMatch(err, /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /);
      process.stderr.write(`SIGTERM with ${N} tasks: exited in ${took} ms\n`);
      assert.ok(took < 5000, `exited in ${took} ms: ${err.slice(-3000)}`);
      assert.deepEqual(folders(), [], 'no temporary computer folder left');
      assert.deepEqual(processesOf(dir), [], 'no runner left');
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
      for (const p of processesOf(dir)) { try { process.kill(Number(p), 'SIGKILL'); } catch { /* gone */ } }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('split: the driver\'s SIGTERM removes the temporary computers it holds, at once', async () => {
    const M = 200;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-term-'));
    const s = await startServer(['--backend', 'go_busybox', '--max-session-computers', String(M)], { mode: 'split',
      env: { KILNTAINERS_WASM_DIR: dir, HOME: dir } });
    try {
      const ids = Array.from({ length: M }, (_, i) => cid(`term-${i}`));
      for (let i = 0; i < M; i += 16) {   // --max-session-commands
        await Promise.all(ids.slice(i, i + 16).map(async (id) => assertReplyShape(
          await s.call({ computer_id: id, command: 'true' }, { timeoutMs: 120000 }))));
      }
      assert.equal(leftovers(dir).length, M, 'one folder per temporary computer');
      const driver = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
        try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0].endsWith('msc-wasm-driver')
          && fs.readFileSync(`/proc/${p}/environ`, 'utf8').includes(`KILNTAINERS_WASM_DIR=${dir}`); } catch { return false; }
      });
      assert.ok(driver, 'the split driver runs');
      const t0 = Date.now();
      process.kill(Number(driver), 'SIGTERM');
      assert.ok(await waitFor(() => !fs.existsSync(`/proc/${driver}`) ||
        /\) Z /.test(fs.readFileSync(`/proc/${driver}/stat`, 'utf8')), { timeoutMs: 5000, intervalMs: 20 }),
      'the driver exits within 5 s');
      process.stderr.write(`split driver SIGTERM with ${M} temporaries: ${Date.now() - t0} ms\n`);
      assert.deepEqual(leftovers(dir), [], 'no temporary computer folder left, hidden or not');
      assert.match(s.stderr(), new RegExp(`removed ${M} temporary computer\\(s\\) at stop`));
      assert.doesNotMatch(s.stderr(), /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /);
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('go_busybox: the runner started ahead (issue 33)', () => {
  // The live children of pid started with --spare-fd (wasm_runner.c).
  const sparesOf = (pid) => fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      return ppid === pid && !/\) Z /.test(stat)
        && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('--spare-fd');
    } catch { return false; }
  });
  const alive = (p) => { try { return !/\) Z /.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8')); } catch { return false; } };

  it('one waits after a command; killed, the next command starts its own and a new one waits', async () => {
    const s = await busybox();
    try {
      const id = cid('spare');
      let r = assertReplyShape(await s.call({ computer_id: id, command: 'echo one' }));
      assert.equal(r.stdout, 'one\n');
      assert.ok(await waitFor(() => sparesOf(s.pid).length === 1, { timeoutMs: 5000, intervalMs: 20 }),
        'a spare runner waits after the first command');
      const [first] = sparesOf(s.pid);
      process.kill(Number(first), 'SIGKILL');
      assert.ok(await waitFor(() => !alive(first), { timeoutMs: 5000, intervalMs: 20 }));
      r = assertReplyShape(await s.call({ computer_id: id, command: 'echo two; exit 3' }));
      assert.deepEqual([r.stdout, r.exit_code], ['two\n', 3]);
      assert.ok(await waitFor(() => sparesOf(s.pid).length === 1 && sparesOf(s.pid)[0] !== first,
        { timeoutMs: 5000, intervalMs: 20 }), 'a new spare waits');
      // The spare takes the command line as given: the working directory, stdin, a long argument.
      const long = 'x'.repeat(60000);
      r = assertReplyShape(await s.call({ computer_id: id, args: ['sh', '-c', 'pwd; wc -c; echo ${#1}', 'sh', long],
        working_directory: '/sub/dir', stdin: 'four\n' }));
      assert.deepEqual([r.stdout, r.exit_code], ['/sub/dir\n5\n60000\n', 0]);
    } finally { await s.close(); }
  });

  it('ends with the server: at SIGTERM, and by itself when the server is killed', async () => {
    for (const sig of ['SIGTERM', 'SIGKILL']) {
      const s = await busybox();
      let spare;
      try {
        assertReplyShape(await s.call({ computer_id: cid('spare-end'), command: 'true' }));
        assert.ok(await waitFor(() => sparesOf(s.pid).length === 1, { timeoutMs: 5000, intervalMs: 20 }));
        [spare] = sparesOf(s.pid);
        s.proc.kill(sig);
        assert.ok(await waitFor(() => !alive(spare), { timeoutMs: 3000, intervalMs: 20 }),
          `the spare ends after the server's ${sig}`);
      } finally {
        await s.close();
        if (spare && alive(spare)) process.kill(Number(spare), 'SIGKILL');
      }
    }
  });
});

describe('go_busybox split into processes', () => {
  it('serves the same computers through msc-wasm-driver', async () => {
    const s = await startServer(['--backend', 'go_busybox'], { mode: 'split', env: env() });
    try {
      const id = cid('bb-split');
      let r = assertReplyShape(await s.call({ computer_id: id, command: 'echo split > s.txt && cat s.txt | wc -c' }));
      assert.deepEqual([r.stdout.trim(), r.exit_code], ['6', 0]);
      r = assertReplyShape(await s.call({ computer_id: id, command: 'sleep 10', timeout: 1 }));
      assert.equal(r.exit_code, 124);
      assert.ok(fs.existsSync(folder('go_busybox', id)));
    } finally { await s.close(); }
    assert.ok(!fs.existsSync(folder('go_busybox', cid('bb-split'))), 'temporary folder removed at session end');
  });
});

describe('wasm backend', () => {
  it('refuses a missing module with the reference texts', async () => {
    let r = await run(MSC_BIN, ['--backend', 'wasm', '--wasm-path', path.join(state, 'nope.wasm')], { env: { ...process.env, ...env() } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /WASM file not found: '.*nope\.wasm'/);
    r = await run(MSC_BIN, ['--backend', 'wasm'], { env: { ...process.env, ...env() } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--wasm-path/);
    fs.writeFileSync(path.join(state, 'bad.wasm'), 'not a module');
    r = await run(MSC_BIN, ['--backend', 'wasm', '--wasm-path', path.join(state, 'bad.wasm')], { env: { ...process.env, ...env() } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Failed to compile WASM module/);
  });

  it('runs the module with args, stdin, files and exit codes', async () => {
    const s = await wasm();
    try {
      const base = { computer_id: cid('w-run') };
      const ok = async (args, extra = {}) => assertReplyShape(await s.call({ ...base, args, ...extra }));
      let r = await ok(['echo', 'hello']);
      assert.deepEqual([r.stdout, r.stderr, r.exit_code], ['hello\n', '', 0]);
      r = await ok(['anything', 'x']);
      assert.equal(r.stdout, '[probe]\n[anything]\n[x]\n', 'argv[0] is the module stem');
      r = await ok(['cat'], { stdin: 'piped' });
      assert.equal(r.stdout, 'piped');
      assert.equal((await ok(['write', 'f.txt', 'data'])).exit_code, 0);
      assert.equal((await ok(['read', 'f.txt'])).stdout, 'data');
      assert.equal((await ok(['read', '/f.txt'], { working_directory: '/sub' })).stdout, 'data');
      assert.equal((await ok(['exit', '42'])).exit_code, 42);
      r = await ok(['stderr']);
      assert.equal(r.stderr, 'to stderr\n');
      const e = await s.call({ ...base, command: 'echo hello' });
      assertToolError(e, 'command mode', 'shell');
      const sha = createHash('sha256').update(fs.readFileSync(PROBE)).digest('hex');
      assert.ok(fs.readdirSync(path.join(state, 'cache')).some((f) => f.startsWith(`${sha}-`)),
        'the compiled module is cached under the SHA-256 of the file');
    } finally { await s.close(); }
  });

  it('passes command lines to the module shell given by --shell', async () => {
    const s = await wasm(['--shell', 'ash']);
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('w-shell'), command: 'echo hello' }));
      assert.equal(r.stdout, '[probe]\n[ash]\n[-c]\n[echo hello]\n');
    } finally { await s.close(); }
  });

  it('stops a loop by fuel and by timeout, and a hog by the memory cap', async () => {
    const s = await wasm(['--wasm-fuel', '1000000', '--wasm-max-memory', '16']);
    try {
      const base = { computer_id: cid('w-fuel') };
      let r = assertReplyShape(await s.call({ ...base, args: ['loop'], timeout: 30 }));
      assert.equal(r.exit_code, 124);
      assert.ok(r.stderr.includes('timed out'), r.stderr);
      r = assertReplyShape(await s.call({ ...base, args: ['alloc', '64'] }));
      assert.equal(r.exit_code, 3);
      assert.match(r.stdout, /allocated (\d+) MiB/);
      assert.ok(Number(/allocated (\d+)/.exec(r.stdout)[1]) < 16);
      r = assertReplyShape(await s.call({ ...base, args: ['alloc', '4'] }));
      assert.equal(r.exit_code, 0);
    } finally { await s.close(); }
    const t = await wasm();
    try {
      const r = assertReplyShape(await t.call({ computer_id: cid('w-loop'), args: ['loop'], timeout: 1 }));
      assert.equal(r.exit_code, 124);
      assert.ok(r.stderr.includes(TIMEOUT_MARKER(1)));
    } finally { await t.close(); }
  });
});

describe('secrets', () => {
  const TOKENS = {
    KILNTAINERS_AUTH_TOKEN: 'canary-auth-5f1c', FLY_API_TOKEN: 'canary-fly-77ab', FLY_TOKEN: 'canary-fly2-0e9d',
    E2B_API_KEY: 'canary-e2b-3c4d', MODAL_TOKEN_ID: 'canary-mid-9a8b', MODAL_TOKEN_SECRET: 'canary-msec-1d2e',
  };

  it('blanks a token given as a flag from ps and warns without printing it', async () => {
    const flagTok = 'flag-secret-8e7f6a';
    const s = await busybox(['--auth-token', flagTok, `--fly-token=${flagTok}-fly`]);
    try {
      const r = assertReplyShape(await s.call({ computer_id: cid('secret-ps'), args: ['echo', 'up'] }));
      assert.equal(r.stdout, 'up\n');
      const cmdline = fs.readFileSync(`/proc/${s.pid}/cmdline`, 'latin1');
      assert.ok(cmdline.includes('--auth-token\0*\0'), `argv shows the flag blanked: ${JSON.stringify(cmdline)}`);
      assert.ok(cmdline.includes('--fly-token=*\0'), 'the --x=value form too');
      assert.ok(!cmdline.includes(flagTok), 'the token is gone from /proc/<pid>/cmdline');
      const err = s.stderr();
      assert.ok(err.includes('kilntainers: warning: --auth-token is visible to other users in ps; '
        + 'use KILNTAINERS_AUTH_TOKEN or --auth-token-file'), err);
      assert.ok(err.includes('--fly-token is visible to other users in ps; use FLY_API_TOKEN or --fly-token-file'), err);
      assert.ok(!err.includes(flagTok), 'the token never reaches the log');
    } finally { await s.close(); }
  });

  it('reads --auth-token-file and keeps the server environment out of guests', async () => {
    const file = path.join(state, 'token');
    fs.writeFileSync(file, 'file-secret-42aa\n', { mode: 0o600 });
    const s = await startServer(['--backend', 'go_busybox', '--auth-token-file', file],
      { env: { ...env(), ...TOKENS, SERVER_ONLY_CANARY: 'canary-env-6b5a' } });
    try {
      const base = { computer_id: cid('secret-env') };
      const r = assertReplyShape(await s.call({ ...base, args: ['env'] }));
      assert.equal(r.exit_code, 0);
      assert.match(r.stdout, /^HOME=\/$/m, 'the guest has its own environment');
      const sh = assertReplyShape(await s.call({ ...base,
        command: 'echo "[$KILNTAINERS_AUTH_TOKEN$FLY_API_TOKEN$E2B_API_KEY$MODAL_TOKEN_SECRET$SERVER_ONLY_CANARY]"' }));
      assert.equal(sh.stdout, '[]\n');
      for (const v of [...Object.values(TOKENS), 'canary-env-6b5a', 'file-secret-42aa']) {
        assert.ok(!r.stdout.includes(v), `${v} is not in the guest's env: ${r.stdout}`);
        assert.ok(!s.stderr().includes(v), `${v} is not logged`);
      }
      assert.ok(!s.stderr().includes('visible to other users'), 'a file is not in ps: no warning');
    } finally { await s.close(); }
  });
});

describe('go_busybox cancellation (issue 16)', () => {
  // The runner processes the server started (its children), from /proc.
  const children = (pid) => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((d) => {
    try { return fs.readFileSync(`/proc/${d}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1] === String(pid); } catch { return false; }
  });

  it('an aborted call kills its runner within a second and gets no response', async () => {
    const s = await busybox();
    try {
      const base = { computer_id: cid('bb-cancel') };
      assertReplyShape(await s.call({ ...base, command: 'true' }));
      // The runner of `true` is reaped just after its reply (wasm_runner_reap): then only the spare is left.
      await waitFor(() => children(s.pid).length <= 1, { timeoutMs: 2000, intervalMs: 10 });
      const before = children(s.pid).length;
      const ac = new AbortController();
      const p = s.client.callTool({ name: 'terminal_execute', arguments: { ...base, command: 'sleep 30' } },
        undefined, { signal: ac.signal, timeout: 60000 }).then((r) => ({ r }), (e) => ({ e }));
      const t = Date.now();
      while (children(s.pid).length <= before && Date.now() - t < 5000) await new Promise((r) => setTimeout(r, 20));
      assert.ok(children(s.pid).length > before, 'a runner started');
      const t0 = Date.now();
      ac.abort();
      assert.ok((await p).e);
      while (children(s.pid).length > before && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 20));
      assert.equal(children(s.pid).length, before, 'the runner is gone');
      assert.ok(Date.now() - t0 < 1000, `gone after ${Date.now() - t0} ms`);
      const r = assertReplyShape(await s.call({ ...base, command: 'echo after' }));
      assert.equal(r.stdout, 'after\n');
    } finally { await s.close(); }
  });
});
