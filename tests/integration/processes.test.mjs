// Background processes (issue 28, --tools processes): terminal_execute with background: true and
// the process_list / process_output / process_kill tools, through the official SDK (v1 client at
// 2025-11-25, v2 client at 2026-07-28) over stdio and HTTP. Every container made here carries the
// label msc.proc-test=<run> and is removed at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MSC_BIN, ENGINE, docker, waitFor, waitExit, sleep, run, freePort } from './lib.mjs';
import { call, ok } from './tool_calls.mjs';

const RUN = `proc${randomBytes(3).toString('hex')}`;
const LABEL = `--docker-run-flag=--label=msc.proc-test=${RUN}`;
// The network as users have it (on, the default).
// Its own --driver-id: no waiting container of another server (whose helper may be older) is taken.
// MSC_TEST_ENGINE=podman (meson's podman/processes): --engine podman.
const TOOLS = ['--tools', 'processes,lifecycle', '--driver-id', RUN, ...(ENGINE === 'podman' ? ['--engine', 'podman'] : [])];

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
  const ids = (await docker(['ps', '-aq', '--filter', `label=msc.proc-test=${RUN}`])).stdout.trim();
  if (ids) await docker(['rm', '-f', ...ids.split(/\s+/)]);
});

async function startHttp(flags = []) {
  const port = await freePort();
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(MSC_BIN, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), LABEL, ...TOOLS, ...flags],
    { stdio: ['ignore', 'ignore', 'pipe'], env });
  procs.add(proc);
  watch(proc.stderr);
  const url = `http://127.0.0.1:${port}/mcp`;
  const ok = await waitFor(async () => {
    try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200; } catch { return false; }
  }, { timeoutMs: 20000, intervalMs: 100 });
  assert.ok(ok, 'server not ready');
  return { url, proc };
}

async function stdioV1(flags = []) {
  // the whole environment (the SDK passes a few variables only): DOCKER_HOST, MSC_FAST_EXEC_DIR
  const t = new StdioV1({ command: MSC_BIN, args: [LABEL, ...TOOLS, ...flags], stderr: 'pipe', env: { ...process.env } });
  watch(t.stderr);
  const c = new ClientV1({ name: 'proc-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  return c;
}

async function v1Http(url) {
  const c = new ClientV1({ name: 'proc-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(new HttpV1(new URL(url)));
  return c;
}

async function v2Http(url) {
  const c = new ClientV2({ name: 'proc-test', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  clients.add(c);
  await c.connect(new HttpV2(new URL(url)));
  return c;
}

// 120 s per call: a computer's start or restart on a loaded CI host can pass the SDK's 60 s.

// A perl HTTP server (perl-base is in debian:bookworm-slim): ready after a second, then answers.
const SERVER = `sleep 1; exec perl -MIO::Socket::INET -e '$|=1; my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 8080, Listen => 5, ReuseAddr => 1) or die "listen: $!"; print "ready on 8080\\n"; while (my $c = $s->accept) { my $l = <$c>; print $c "HTTP/1.0 200 OK\\r\\n\\r\\nhello from the background\\n"; close $c; print "served $l"; }'`;
const CLIENT = `perl -MIO::Socket::INET -e '$c = IO::Socket::INET->new("127.0.0.1:8080") or die "connect: $!"; print $c "GET /x HTTP/1.0\\r\\n\\r\\n"; print <$c>;'`;
const COUNT_SLEEPS = `n=0; for p in /proc/[0-9]*; do case "$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)" in "sleep 300"*) n=$((n+1));; esac; done; echo $n`;

test('stdio (2025): a background perl server answers a second call; a pattern waits for its ready line; kill ends its group', async () => {
  const c = await stdioV1(['--max-background-processes', '3', '--process-log-limit', '65536']);
  const names = (await c.listTools()).tools.map((t) => t.name);
  for (const n of ['terminal_execute', 'computer_release', 'computer_list', 'process_list', 'process_output', 'process_kill'])
    assert.ok(names.includes(n), `${n} in ${names}`);
  const schema = (await c.listTools()).tools[0].inputSchema.properties;
  assert.equal(schema.background.type, 'boolean');

  await ok(c, 'terminal_execute', { command: 'true' });   // the computer first
  const t0 = Date.now();
  const s = await ok(c, 'terminal_execute', { command: SERVER, background: true });
  assert.ok(Date.now() - t0 < 5000, 'returns at once');
  assert.match(s.process_id, /^p[0-9]+$/);
  assert.equal(s.command, SERVER);
  assert.match(s.log, /^\/tmp\/kiln-processes\/p[0-9]+\/log$/);
  const id = s.process_id;

  const w0 = Date.now();
  const ready = await ok(c, 'process_output', { process_id: id, pattern: 'ready on [0-9]+', wait_ms: 15000 });
  assert.equal(ready.matched, true, JSON.stringify(ready));
  assert.equal(ready.match, 'ready on 8080');
  assert.equal(ready.state, 'running');
  assert.equal(ready.exit_code, null);
  assert.match(ready.output, /ready on 8080\n/);
  assert.ok(Date.now() - w0 < 10000, 'returned on the line, not at wait_ms');

  const got = await ok(c, 'terminal_execute', { command: CLIENT });
  assert.match(got.stdout, /hello from the background/);
  const more = await ok(c, 'process_output', { process_id: id, offset: ready.offset, pattern: 'served', wait_ms: 5000 });
  assert.match(more.output, /served GET \/x/);
  // the log is a plain file a command reads too
  const cat = await ok(c, 'terminal_execute', { command: `cat ${s.log}` });
  assert.match(cat.stdout, /ready on 8080\nserved GET/);

  const list = await ok(c, 'process_list', {});
  const mine = list.processes.find((p) => p.process_id === id);
  assert.equal(mine.state, 'running');
  assert.equal(mine.command, SERVER);
  assert.ok(mine.output_bytes > 0);

  // a group whose members ignore TERM: KILLed after the grace
  const stubborn = await ok(c, 'terminal_execute', { command: `trap '' TERM; (trap '' TERM; sleep 300) & sleep 300 & echo up; wait`, background: true });
  await ok(c, 'process_output', { process_id: stubborn.process_id, pattern: 'up', wait_ms: 5000 });
  assert.equal((await ok(c, 'terminal_execute', { command: COUNT_SLEEPS })).stdout.trim(), '2');
  const k = await ok(c, 'process_kill', { process_id: stubborn.process_id });
  assert.equal(k.state, 'killed');
  assert.equal(k.escalated_to_kill, true);
  assert.equal((await ok(c, 'terminal_execute', { command: COUNT_SLEEPS })).stdout.trim(), '0', 'the whole group ended');

  // a foreground command's children that hold its output are stopped, and the reply says so
  const fg = await ok(c, 'terminal_execute', { command: 'sleep 301 & sleep 302 & echo started' });
  assert.equal(fg.stdout, 'started\n');
  assert.match(fg.stderr, /\[kilntainers: 2 background processes were stopped: they held the command's output when it ended; terminal_execute's background: true keeps a process running\]/);
  const quiet = await ok(c, 'terminal_execute', { command: 'echo plain' });
  assert.equal(quiet.stderr, '');

  // a hundred children and the command exits: it reads exited, and kill still ends the group
  const many = await ok(c, 'terminal_execute', { command: 'for i in $(seq 100); do sleep 300 & done; echo forked', background: true });
  await waitFor(async () => (await ok(c, 'process_output', { process_id: many.process_id })).state === 'exited', { timeoutMs: 10000 });
  assert.equal((await ok(c, 'process_output', { process_id: many.process_id })).exit_code, 0);
  assert.equal((await ok(c, 'terminal_execute', { command: COUNT_SLEEPS })).stdout.trim(), '100');
  await ok(c, 'process_kill', { process_id: many.process_id });
  assert.equal((await ok(c, 'terminal_execute', { command: COUNT_SLEEPS })).stdout.trim(), '0', 'the hundred ended');

  // the quota (3 here): the server, and two more; one of them exits at once while its child
  // runs on, holding its output: it still counts
  await ok(c, 'terminal_execute', { command: 'sleep 300', background: true });
  const early = await ok(c, 'terminal_execute', { command: 'sleep 300 & exit 0', background: true });
  await waitFor(async () => (await ok(c, 'process_output', { process_id: early.process_id })).state === 'exited', { timeoutMs: 10000 });
  const over = await call(c, 'terminal_execute', { command: 'sleep 300', background: true });
  assert.equal(over.isError, true);
  assert.match(over.content[0].text, /At most 3 background processes run in one computer/);

  // kill the server: TERM ends it
  const ks = await ok(c, 'process_kill', { process_id: id, signal: 'TERM' });
  assert.equal(ks.state, 'killed');
  assert.equal(ks.signal, 15);
  assert.equal(ks.escalated_to_kill, false);
  const after = await ok(c, 'process_output', { process_id: id, offset: 0 });
  assert.equal(after.state, 'killed');
  assert.match(after.output, /ready on 8080/, 'the output is still there');
  for (const p of (await ok(c, 'process_list', {})).processes)
    if (p.state === 'running') await ok(c, 'process_kill', { process_id: p.process_id, signal: 'KILL' });

  // one that ends before anyone reads it: its code and output stay
  const quick = await ok(c, 'terminal_execute', { args: ['sh', '-c', 'echo bye; exit 7'], background: true });
  const q = await ok(c, 'process_output', { process_id: quick.process_id, wait_ms: 5000 });
  await waitFor(async () => (await ok(c, 'process_output', { process_id: quick.process_id })).state === 'exited', { timeoutMs: 5000 });
  const qe = await ok(c, 'process_output', { process_id: quick.process_id });
  assert.equal(qe.exit_code, 7);
  assert.equal(qe.output, 'bye\n', JSON.stringify(q));

  // stdin is passed; a lot of output keeps the log bounded (65536 here)
  const withIn = await ok(c, 'terminal_execute', { command: 'cat', stdin: 'from stdin', background: true });
  const wi = await ok(c, 'process_output', { process_id: withIn.process_id, wait_ms: 5000, pattern: 'stdin' });
  assert.equal(wi.output, 'from stdin');
  const big = await ok(c, 'terminal_execute', { command: 'head -c 3000000 /dev/zero | tr "\\0" x; echo; echo end', background: true });
  const be = await ok(c, 'process_output', { process_id: big.process_id, wait_ms: 20000, pattern: 'end' });
  assert.equal(be.matched, true, JSON.stringify({ ...be, output: be.output.length }));
  assert.equal(be.dropped, true, 'the oldest bytes were dropped');
  assert.ok(be.output_bytes >= 3000000);
  assert.ok(be.offset > 3000000 - 65536 && be.offset <= be.output_bytes, String(be.offset));
  const du = await ok(c, 'terminal_execute', { command: `cat ${big.log}.0 ${big.log} | wc -c` });
  assert.ok(Number(du.stdout.trim()) <= 65536, du.stdout);

  // bad input
  for (const [args, re] of [
    [{ process_id: 'p999' }, /Unknown process_id p999/],
    [{ process_id: '../../etc' }, /Unknown process_id/],
    [{ process_id: id, wait_ms: -1 }, /wait_ms: must be 0 to 30000/],
    [{ process_id: id, wait_ms: 1e12 }, /wait_ms: must be 0 to 30000/],
    [{ process_id: id, pattern: '(' }, /pattern: not a valid POSIX extended regular expression/],
    [{}, /process_id: Field required/],
  ]) {
    const r = await call(c, 'process_output', args);
    assert.equal(r.isError, true, JSON.stringify(args));
    assert.match(r.content[0].text, re);
  }
  const badSig = await call(c, 'process_kill', { process_id: id, signal: 'NOPE' });
  assert.match(badSig.content[0].text, /signal: unknown signal NOPE/);
  await c.close();
});

// The sandboxed code runs as root in its computer and can change everything under
// /tmp/kiln-processes; what it must not do is make the helper's commands (which the server calls)
// crash or hang, or make them write where another user of the computer points.
test('attack: tampered process folders: no call crashes or hangs, and another user\'s folder is not used', async () => {
  const c = await stdioV1();
  const a = await ok(c, 'terminal_execute', { command: 'echo one; sleep 300', background: true });
  const dir = a.log.replace(/\/log$/, '');
  await waitFor(async () => (await ok(c, 'process_list', {})).processes[0].pid !== null, { timeoutMs: 10000 });
  // a newline alone in a small file (the number parser got NULL: the list and the next start
  // crashed)
  await ok(c, 'terminal_execute', { command: `printf '\\n' > ${dir}/started; printf '\\n' > /tmp/kiln-processes/next` });
  const l = await ok(c, 'process_list', {});
  assert.equal(l.processes[0].state, 'running', JSON.stringify(l));
  // fifos for its status and offsets: reads do not wait for a writer (they hung until the
  // call's timeout)
  await ok(c, 'terminal_execute', { command: `cd ${dir} && rm -f status offsets && mkfifo status offsets` });
  let t0 = Date.now();
  assert.equal((await ok(c, 'process_list', {})).processes[0].state, 'running');
  const o = await ok(c, 'process_output', { process_id: a.process_id });
  assert.equal(o.output, 'one\n');
  assert.ok(Date.now() - t0 < 5000, `answered in ${Date.now() - t0} ms`);

  // the folder's lock held by the sandboxed code: a start waits a bounded time and says why
  // (it waited for the call's timeout)
  const holder = await ok(c, 'terminal_execute', { command: 'exec flock /tmp/kiln-processes sh -c "echo held; sleep 300"', background: true });
  await ok(c, 'process_output', { process_id: holder.process_id, pattern: 'held', wait_ms: 10000 });
  t0 = Date.now();
  const locked = await call(c, 'terminal_execute', { command: 'true', background: true });
  assert.equal(locked.isError, true);
  assert.match(locked.content[0].text, /cannot lock \/tmp\/kiln-processes: another process has held it for too long/);
  assert.ok(Date.now() - t0 < 10000, `answered in ${Date.now() - t0} ms`);
  await ok(c, 'process_kill', { process_id: holder.process_id, signal: 'KILL' });

  // /tmp/kiln-processes made by another user (nobody), or a link: not used, nothing written
  // there (before: the supervisor wrote its files where they pointed)
  await ok(c, 'terminal_execute', { command: 'mv /tmp/kiln-processes /tmp/kp-saved && mkdir -m 755 /tmp/kiln-processes && chown nobody /tmp/kiln-processes && mkdir /tmp/elsewhere' });
  const NOT_PRIVATE = /\/tmp\/kiln-processes is not a private folder of this user/;
  for (const plant of ['true', 'rm -r /tmp/kiln-processes && ln -s /tmp/elsewhere /tmp/kiln-processes']) {
    await ok(c, 'terminal_execute', { command: plant });
    const r = await call(c, 'terminal_execute', { command: 'echo planted', background: true });
    assert.equal(r.isError, true, plant);
    assert.match(r.content[0].text, NOT_PRIVATE, plant);
    const pl = await call(c, 'process_list', {});
    assert.match(pl.content[0].text, NOT_PRIVATE, plant);
    const ls = await ok(c, 'terminal_execute', { command: 'ls -A /tmp/kiln-processes/ /tmp/elsewhere/' });
    assert.doesNotMatch(ls.stdout, /p[0-9]|next/, plant);
  }
  await ok(c, 'terminal_execute', { command: 'rm /tmp/kiln-processes && mv /tmp/kp-saved /tmp/kiln-processes' });
  const k = await ok(c, 'process_kill', { process_id: a.process_id });
  assert.equal(k.state, 'killed');
  await c.close();
});

test('a permanent computer: a new server reads the same process and stops it', async () => {
  const id = `${RUN}-perm`;
  const a = await stdioV1();
  const s = await ok(a, 'terminal_execute', { computer_id: id, temporary: false, background: true,
    command: 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done' });
  await a.close();
  const b = await stdioV1();
  const out = await ok(b, 'process_output', { computer_id: id, temporary: false, process_id: s.process_id, pattern: 'tick 5', wait_ms: 15000 });
  assert.equal(out.matched, true);
  assert.equal(out.state, 'running');
  assert.equal(out.computer_id, id);
  const k = await ok(b, 'process_kill', { computer_id: id, temporary: false, process_id: s.process_id });
  assert.equal(k.state, 'killed');
  // a restart ends every background process: its reply says how many, and the list says so
  const again = await ok(b, 'terminal_execute', { computer_id: id, temporary: false, command: 'sleep 300', background: true });
  const r = await ok(b, 'computer_restart', { computer_id: id });
  assert.equal(r.background_processes_ended, 1, JSON.stringify(r));
  const l = await ok(b, 'process_list', { computer_id: id, temporary: false });
  const p = l.processes.find((x) => x.process_id === again.process_id);
  assert.equal(p.state, 'killed', JSON.stringify(l));
  // none running: the reference's replies, unchanged
  assert.deepEqual(Object.keys(await ok(b, 'computer_restart', { computer_id: id })).sort(), ['computer_id', 'ok', 'sandbox_id', 'temporary']);
  // a factory reset and a delete say how many ended
  for (let i = 0; i < 2; i++) await ok(b, 'terminal_execute', { computer_id: id, temporary: false, command: 'sleep 300', background: true });
  await ok(b, 'terminal_execute', { computer_id: id, temporary: false, command: 'true', background: true });   // ends at once
  await waitFor(async () => (await ok(b, 'process_list', { computer_id: id, temporary: false })).processes.filter((x) => x.state === 'running').length === 2, { timeoutMs: 10000 });
  const fr = await ok(b, 'computer_factory_reset', { computer_id: id });
  assert.equal(fr.background_processes_ended, 2, JSON.stringify(fr));
  assert.deepEqual((await ok(b, 'process_list', { computer_id: id, temporary: false })).processes, [], 'a reset computer has none');
  await ok(b, 'terminal_execute', { computer_id: id, temporary: false, command: 'sleep 300', background: true });
  assert.deepEqual(await ok(b, 'computer_delete', { computer_id: id }), { ok: true, computer_id: id, deleted: true, background_processes_ended: 1 });
  // deleted with none running: the reference's reply
  await ok(b, 'computer_create', { computer_id: id, temporary: false });
  assert.deepEqual(await ok(b, 'computer_delete', { computer_id: id }), { ok: true, computer_id: id, deleted: true });
});

test('attack: another agent cannot list, read or kill the processes (2025 sessions and 2026 handles)', async () => {
  const srv = await startHttp();
  const victim = await v1Http(srv.url);
  const thief = await v1Http(srv.url);
  const id = `${RUN}-victim`;
  const v = await ok(victim, 'terminal_execute', { computer_id: id, background: true, command: 'echo secret-output; sleep 300' });
  for (const [name, args] of [['process_list', {}], ['process_output', { process_id: v.process_id }],
    ['process_kill', { process_id: v.process_id, signal: 'KILL' }]]) {
    const r = await call(thief, name, { computer_id: id, ...args });
    assert.equal(r.isError, true, name);
    assert.match(r.content[0].text, /Temporary computer already has an active sandbox_handle/, name);
    assert.doesNotMatch(JSON.stringify(r), /secret-output/);
  }
  // in the thief's own computer the id names nothing
  const own = await call(thief, 'process_output', { process_id: v.process_id });
  assert.match(own.content[0].text, /Unknown process_id/);
  // 2026: a made-up handle, and its own handle with the victim's computer id
  const modern = await v2Http(srv.url);
  const m1 = await call(modern, 'process_output', { sandbox_handle: 'a'.repeat(43), process_id: v.process_id });
  assert.match(m1.content[0].text, /Unknown or expired sandbox_handle/);
  const mine = await ok(modern, 'terminal_execute', { command: 'sleep 300', background: true });
  assert.ok(mine.sandbox_handle, 'a handle was minted');
  for (const name of ['process_list', 'process_output', 'process_kill']) {
    const r = await call(modern, name, { sandbox_handle: mine.sandbox_handle, computer_id: id, process_id: v.process_id });
    assert.equal(r.isError, true, name);
    assert.match(r.content[0].text, /computer_id does not match sandbox_handle/, name);
  }
  // the modern agent's own process, through its handle; a 2025 agent cannot reach it
  const ml = await ok(modern, 'process_list', { sandbox_handle: mine.sandbox_handle });
  assert.deepEqual(ml.processes.map((p) => p.process_id), [mine.process_id]);
  const cross = await call(victim, 'process_list', { computer_id: mine.computer_id });
  assert.equal(cross.isError, true);
  // the victim's process is untouched
  const still = await ok(victim, 'process_output', { computer_id: id, process_id: v.process_id });
  assert.equal(still.state, 'running');
  assert.match(still.output, /secret-output/);
});

test('the switch: without processes the tools are absent and background is refused; a backend without processes says so', async () => {
  const t = new StdioV1({ command: MSC_BIN, args: [LABEL], stderr: 'pipe' });
  watch(t.stderr);
  const c = new ClientV1({ name: 'proc-test', version: '1' }, { capabilities: {} });
  clients.add(c);
  await c.connect(t);
  const names = (await c.listTools()).tools.map((x) => x.name);
  assert.deepEqual(names, ['terminal_execute', 'computer_release']);
  const r = await call(c, 'process_list', {});
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /Unknown tool: process_list/);
  const b = await call(c, 'terminal_execute', { command: 'true', background: true });
  assert.match(b.content[0].text, /background: true needs the processes tool group/);
  await c.close();
  // an unknown group stops the start
  const bad = await run(MSC_BIN, ['--tools', 'processes,nope']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--tools: unknown tool group 'nope'/);
  // the lifecycle group is ENABLE_LIFECYCLE_TOOLS
  const l = await stdioV1();
  assert.ok((await l.listTools()).tools.some((x) => x.name === 'computer_create'));
  await l.close();
  const w = new StdioV1({ command: MSC_BIN, args: ['--backend', 'go_busybox', '--tools', 'processes'], stderr: 'pipe' });
  watch(w.stderr);
  const wc = new ClientV1({ name: 'proc-test', version: '1' }, { capabilities: {} });
  clients.add(wc);
  await wc.connect(w);
  const wr = await call(wc, 'process_list', {});
  assert.equal(wr.isError, true);
  assert.match(wr.content[0].text, /the go_busybox backend has no process supervisor/);
  await wc.close();
});
