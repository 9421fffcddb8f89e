// Slow and abandoned clients (slowloris): 1,000 or more connections that send a partial request line and
// headers and then one more header byte a second, never finishing, as an attacker holding the
// listener would. The server runs under a descriptor limit of 1024. A new client must still get
// its initialize served within 1 s, and the server must close the half-open connections itself
// once the header deadline (10 s) has passed, although they never go quiet for long enough for
// an inactivity timeout. The attacker connects from 127.0.0.2..127.0.0.5 (all of 127/8 is
// loopback on Linux), the legitimate client from 127.0.0.1. An idle keep-alive connection is
// closed after the same deadline, but not under a request that arrived before it and that a
// loaded server had not read yet or had read and not yet handled; nor is a new connection
// whose whole request waits unread, while one with only part of a request is closed at the
// deadline all the same. And 128 requests that came at once while the server was behind are
// all answered as soon as it runs again. No container is needed.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { startHttpServer, request, initializeBody, sleep } from './lib.mjs';

const HEADER_DEADLINE_MS = 10000;
const SLACK_MS = 4000;          // ticks, a loaded machine, sanitizer builds
const report = (t, msg) => { t.diagnostic(msg); process.stderr.write(`http-slowloris: ${msg}\n`); };

const servers = [];
after(async () => { for (const s of servers) await s.stop(); });

/** Opens n half-sent requests from localAddress; each gets one more header byte a second. */
function attack(srv, n, localAddress) {
  const socks = [];
  for (let i = 0; i < n; i++) {
    const st = { t0: performance.now(), connected: false, closedAt: null, data: '' };
    const sock = net.connect({ port: srv.port, host: '127.0.0.1', localAddress });
    st.sock = sock;
    sock.on('connect', () => {
      st.connected = true;
      sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\nX-Pad: `);
    });
    sock.on('data', (d) => { st.data += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.on('close', () => { st.closedAt = performance.now(); });
    socks.push(st);
  }
  const timer = setInterval(() => {
    for (const st of socks) if (st.connected && st.closedAt === null) st.sock.write('a');
  }, 1000);
  return { socks, stop: () => { clearInterval(timer); for (const st of socks) st.sock.destroy(); } };
}

/**
 * Stops the server's HTTP thread (http-loop, edge/mcp_http_loop.c) through ptrace for ms, as a machine too loaded to
 * schedule it would (tests/http/stall_thread.py); resolves once it is stopped, with `ended`, a
 * promise of the helper's exit code once the thread runs again.
 */
async function stallHttpThread(srv, ms) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const stall = spawn('python3', [path.join(here, 'stall_thread.py'), String(srv.pid), 'http-loop',
    String(ms / 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  stall.stdout.on('data', (d) => { out += d; });
  stall.stderr.on('data', (d) => { out += d; });
  const ended = new Promise((r) => stall.on('exit', (code) => r(code)));
  while (!out.includes('stopped') && stall.exitCode === null) await sleep(10);
  assert.match(out, /stopped/, `the server's HTTP thread could not be stopped: ${out}`);
  return { ended, out: () => out };
}

/** A raw connection to srv: what came back (latin1) and when it closed. */
async function rawConnection(srv) {
  const st = { raw: '', closedAt: null };
  st.sock = net.connect(srv.port, '127.0.0.1');
  st.sock.on('data', (d) => { st.raw += d.toString('latin1'); });
  st.sock.on('error', () => {});
  st.sock.on('close', () => { st.closedAt = performance.now(); });
  await new Promise((r) => st.sock.on('connect', r));
  return st;
}

async function timedInitialize(srv) {
  const t0 = performance.now();
  const r = await request(srv, { body: initializeBody(), timeoutMs: 10000 }).catch((e) => ({ status: null, error: e.message }));
  return { ...r, ms: performance.now() - t0 };
}

/** This process's descriptor limit (node raises its soft limit to the hard one). */
function ownFdLimit() {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return !m || m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

async function scenario(t, { wrap, sources, perSource }) {
  const need = sources.length * perSource + 200;
  assert.ok(ownFdLimit() >= need, `the test client needs ${need} descriptors, its limit is ${ownFdLimit()} (raise the hard limit: ulimit -Hn)`);
  const srv = await startHttpServer([], { wrap });
  servers.push(srv);
  const attacks = sources.map((a) => attack(srv, perSource, a));
  const socks = attacks.flatMap((a) => a.socks);
  try {
    // Every attacking connection is either up (and sending) or already turned away.
    const t0 = performance.now();
    while (socks.some((s) => !s.connected && s.closedAt === null) && performance.now() - t0 < 5000) await sleep(50);
    await sleep(500);
    const open = socks.filter((s) => s.closedAt === null).length;

    const first = await timedInitialize(srv);
    const second = await timedInitialize(srv);
    const hz0 = performance.now();
    const hz = await request(srv, { method: 'GET', path: '/healthz', timeoutMs: 5000 }).catch((e) => ({ status: null, error: e.message }));
    const hzMs = performance.now() - hz0;
    report(t, `${socks.length} half-open connections from ${sources.join(', ')} (${open} held by the server, ` +
      `${socks.length - open} turned away); a new client's initialize: ${first.ms.toFixed(0)} ms then ${second.ms.toFixed(0)} ms; ` +
      `healthz ${hzMs.toFixed(0)} ms`);
    assert.equal(first.status, 200, `initialize during the attack: ${first.error ?? first.text?.slice(0, 200)}`);
    assert.ok(first.ms < 1000, `initialize during the attack took ${first.ms.toFixed(0)} ms`);
    assert.equal(second.status, 200);
    assert.ok(second.ms < 1000, `second initialize took ${second.ms.toFixed(0)} ms`);
    assert.equal(hz.status, 200);
    assert.ok(open > 0, 'some attacking connections were accepted (else this tests nothing)');

    // The server closes every half-open connection once its header deadline has passed.
    const deadline = t0 + HEADER_DEADLINE_MS + SLACK_MS;
    while (socks.some((s) => s.closedAt === null) && performance.now() < deadline) await sleep(100);
    const left = socks.filter((s) => s.closedAt === null).length;
    const held = socks.filter((s) => s.closedAt !== null && s.closedAt - s.t0 > 3000);
    const longest = Math.max(...socks.map((s) => (s.closedAt ?? performance.now()) - s.t0));
    report(t, `after the header deadline: ${left} still open; ${held.length} were held and closed by the server, ` +
      `the longest after ${longest.toFixed(0)} ms`);
    assert.equal(left, 0, `${left} half-open connections still open ${(performance.now() - t0).toFixed(0)} ms after they were opened`);
    assert.ok(held.length > 0, 'connections held until the deadline were closed by the server');
    assert.ok(socks.every((s) => !/^HTTP\/1\.[01] 2/.test(s.data)), 'no half-sent request was served');

    const after1 = await timedInitialize(srv);
    assert.equal(after1.status, 200, 'the server serves after the attack');
    assert.ok(srv.alive, 'the server is alive');
  } finally {
    for (const a of attacks) a.stop();
  }
}

describe('half-open connections', () => {
  // The measured incident: 1,100 half-sent requests took every descriptor of a server limited
  // to 1024, and new clients were refused.
  it('1,100 from one address, server limited to 1024 descriptors: a new client is served within 1 s; all are closed after the header deadline', async (t) => {
    await scenario(t, { wrap: ['prlimit', '--nofile=1024:1024', '--'], sources: ['127.0.0.2'], perSource: 1100 });
  });

  // The server raises its soft limit to the hard one and holds them all (below the total cap);
  // where the hard limit is 1024 too, 600 stay below what fits.
  it('1,000 from four addresses, server started with a soft limit of 1024: the same', async (t) => {
    const perSource = ownFdLimit() >= 4096 ? 250 : 150;
    await scenario(t, { wrap: ['prlimit', '--nofile=1024:', '--'], sources: ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'], perSource });
  });
});

describe('idle keep-alive connections', () => {
  it('are closed by the server once they have been idle for the header deadline; requests before that are served on them', async (t) => {
    const srv = await startHttpServer([]);
    servers.push(srv);
    const sock = net.connect(srv.port, '127.0.0.1');
    let raw = '';
    let closedAt = null;
    sock.on('data', (d) => { raw += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.on('close', () => { closedAt = performance.now(); });
    await new Promise((r) => sock.on('connect', r));
    const get = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n\r\n`;
    const answers = () => (raw.match(/HTTP\/1\.1 200 /g) ?? []).length;
    sock.write(get);
    while (answers() < 1 && closedAt === null) await sleep(20);
    await sleep(HEADER_DEADLINE_MS / 2);
    sock.write(get);    // within the deadline: served on the same connection, and the clock restarts
    while (answers() < 2 && closedAt === null) await sleep(20);
    const t1 = performance.now();
    assert.equal(answers(), 2, `both requests answered on one connection: ${raw.slice(0, 500)}`);
    while (closedAt === null && performance.now() - t1 < HEADER_DEADLINE_MS + SLACK_MS) await sleep(100);
    const idleMs = (closedAt ?? performance.now()) - t1;
    report(t, `idle keep-alive connection closed after ${idleMs.toFixed(0)} ms`);
    sock.destroy();
    assert.ok(closedAt !== null, `an idle keep-alive connection still open after ${idleMs.toFixed(0)} ms`);
    assert.ok(idleMs > HEADER_DEADLINE_MS - 1000, `closed after ${idleMs.toFixed(0)} ms, before the deadline`);
  });

  // A loaded machine: the client's next request is on the wire well before the idle deadline, but
  // the server's HTTP thread gets no CPU until after it (here: that one thread stopped through
  // ptrace from just after the first answer to 2 s past the deadline, tests/http/stall_thread.py). The deadline thread must not close the connection under
  // that request: before, the client saw "other side closed" (seen with 200 concurrent clients
  // on a machine at load average 20+).
  it('are not closed under a request sent before the deadline that the server has not read yet', async (t) => {
    const srv = await startHttpServer([]);
    servers.push(srv);
    const sock = net.connect(srv.port, '127.0.0.1');
    let raw = '';
    let closedAt = null;
    sock.on('data', (d) => { raw += d.toString('latin1'); });
    sock.on('error', () => {});
    sock.on('close', () => { closedAt = performance.now(); });
    await new Promise((r) => sock.on('connect', r));
    const get = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n\r\n`;
    const answers = () => (raw.match(/HTTP\/1\.1 200 /g) ?? []).length;
    sock.write(get);
    while (answers() < 1 && closedAt === null) await sleep(20);
    const t1 = performance.now();
    // Stopped now and let go 2 s past the idle deadline; the request goes out while it is stopped.
    const stall = await stallHttpThread(srv, HEADER_DEADLINE_MS + 2000);
    sock.write(get);
    const sent = performance.now() - t1;
    assert.ok(sent < HEADER_DEADLINE_MS - 2000, `the request went out ${sent.toFixed(0)} ms after the first answer, too near the deadline: this tests nothing`);
    assert.equal(await stall.ended, 0, stall.out());
    const resumed = performance.now();
    assert.ok(resumed - t1 > HEADER_DEADLINE_MS + 500, `the stall ended ${(resumed - t1).toFixed(0)} ms after the first answer, before the deadline: this tests nothing`);
    while (answers() < 2 && closedAt === null && performance.now() - resumed < SLACK_MS) await sleep(20);
    report(t, `second request: ${answers() === 2 ? 'answered' : 'not answered'}, ${closedAt === null ? 'connection open' : `closed ${(closedAt - t1).toFixed(0)} ms after the first answer`}`);
    sock.destroy();
    assert.equal(answers(), 2, `the request sent before the deadline was answered: ${raw.slice(0, 500)}`);
  });
});

describe('idle keep-alive connections, the server preempted mid-read', () => {
  // A loaded machine: the client's next request came before the idle deadline and the server's
  // HTTP thread has read it, but is preempted before it handles it (here: strace holds that
  // thread's recvfrom for 12 s after it took the bytes). The deadline thread sees nothing unread
  // and must not take the connection for idle: the kernel counted bytes received since the
  // last reply.
  const hasStrace = spawnSync('strace', ['-V']).status === 0;
  it('are not closed under a request the server has read but not yet handled', { skip: !hasStrace && 'strace is not installed' }, async (t) => {
    const srv = await startHttpServer([]);
    servers.push(srv);
    const c = await rawConnection(srv);
    const get = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n\r\n`;
    const answers = () => (c.raw.match(/HTTP\/1\.1 200 /g) ?? []).length;
    c.sock.write(get);
    while (answers() < 1 && c.closedAt === null) await sleep(20);
    const t1 = performance.now();
    const tasks = `/proc/${srv.pid}/task`;
    const tid = readdirSync(tasks).find((x) => readFileSync(`${tasks}/${x}/comm`, 'utf8').trim() === 'http-loop');
    assert.ok(tid, 'the server has an http-loop thread');
    const holdUs = HEADER_DEADLINE_MS * 1000 + 3000000;
    const strace = spawn('strace', ['-p', tid, '-e', 'trace=recvfrom', '-e', `inject=recvfrom:delay_exit=${holdUs}:when=1`, '-o', '/dev/null'],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    strace.stderr.on('data', (d) => { err += d; });
    try {
      while (!/attached/.test(err) && strace.exitCode === null) await sleep(10);
      assert.match(err, /attached/, `strace could not attach: ${err}`);
      c.sock.write(get);
      const sent = performance.now() - t1;
      assert.ok(sent < HEADER_DEADLINE_MS - 3000, `the request went out ${sent.toFixed(0)} ms after the first answer, too near the deadline: this tests nothing`);
      while (answers() < 2 && c.closedAt === null && performance.now() - t1 < HEADER_DEADLINE_MS + 3000 + SLACK_MS) await sleep(20);
      report(t, `second request: ${answers() === 2 ? 'answered' : 'not answered'} ${(performance.now() - t1).toFixed(0)} ms after the first answer, ${c.closedAt === null ? 'connection open' : `closed ${(c.closedAt - t1).toFixed(0)} ms after the first answer`}`);
      assert.equal(answers(), 2, `the request read before the deadline was answered: ${c.raw.slice(0, 500)}`);
      assert.ok(performance.now() - t1 > HEADER_DEADLINE_MS, 'answered after the deadline (else the hold tested nothing)');
    } finally {
      strace.kill('SIGTERM');
      c.sock.destroy();
    }
  });
});

describe('new connections', () => {
  // A loaded machine: a new client sends its whole request at once, but the server's HTTP thread
  // gets no CPU until past the header deadline (10 s from when the connection was accepted).
  // The deadline thread must not close the connection under that request: it did, and the
  // client saw "socket hang up" (127 of 10,000 initializes, bench/RESULTS.md 2026-12-07 13:21).
  // A part of a request waiting unread gets no more time: a slow sender gains nothing.
  it('are not closed under a whole request the server has not read yet; one with part of a request is closed at the deadline', async (t) => {
    const srv = await startHttpServer([]);
    servers.push(srv);
    const whole = await rawConnection(srv);
    const part = await rawConnection(srv);
    // Answered on a connection opened after them: the server has accepted both (one accept
    // queue, in order), and their header deadlines run from about now.
    const hz = await request(srv, { method: 'GET', path: '/healthz', timeoutMs: 5000 });
    assert.equal(hz.status, 200);
    const t1 = performance.now();
    const stall = await stallHttpThread(srv, HEADER_DEADLINE_MS + 2000);
    const body = JSON.stringify(initializeBody());
    whole.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    part.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n`);
    const sent = performance.now() - t1;
    assert.ok(sent < HEADER_DEADLINE_MS - 2000, `the requests went out ${sent.toFixed(0)} ms after the connections were accepted, too near the deadline: this tests nothing`);
    assert.equal(await stall.ended, 0, stall.out());
    const resumed = performance.now();
    assert.ok(resumed - t1 > HEADER_DEADLINE_MS + 500, `the stall ended ${(resumed - t1).toFixed(0)} ms after the connections were accepted, before the deadline: this tests nothing`);
    const answered = () => /^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*"result"/.test(whole.raw);
    while ((!answered() && whole.closedAt === null) || part.closedAt === null) {
      if (performance.now() - resumed > SLACK_MS) break;
      await sleep(20);
    }
    const at = (st) => (st.closedAt === null ? 'open' : `closed ${(st.closedAt - t1).toFixed(0)} ms after it was accepted`);
    report(t, `whole request: ${answered() ? 'answered' : 'not answered'}, ${at(whole)}; part of one: ${at(part)}`);
    whole.sock.destroy();
    part.sock.destroy();
    assert.ok(answered(), `the whole request sent before the deadline was answered: ${whole.raw.slice(0, 500) || '(nothing)'}`);
    assert.match(whole.raw, /\r\nmcp-session-id: /i);
    assert.ok(part.closedAt !== null, 'the connection with part of a request was closed');
    assert.ok(part.closedAt - t1 < HEADER_DEADLINE_MS + SLACK_MS, `the connection with part of a request was closed ${at(part)}`);
    assert.equal(part.raw, '', 'nothing was served on the part of a request');
  });
});

describe('a burst of requests while the server is behind', () => {
  // MHD's own epoll loop (libmicrohttpd 0.9.75) takes at most 128 events from one wait, and when it
  // got exactly 128 it waited again, with the timeout it had computed before, before handling any
  // of them. A client with exactly 128 connections to an edge, each sending its initialize while
  // the edge's HTTP thread was busy, then got no answer until the nearest connection's inactivity
  // timeout (30 s), when the oldest were closed under their requests: "socket hang up" on 128 of
  // 10,000 initializes (bench/cluster-load.mjs --max-sockets 4 gives each edge 32 source addresses
  // x 4 connections; bench/RESULTS.md 2026-12-07 16:50). Here: 128 connections, accepted and
  // quiet, and the server's HTTP thread stopped while each sends an initialize.
  it('128 requests that came at once are all answered as soon as the server runs again', async (t) => {
    const N = 128;
    const srv = await startHttpServer([]);
    servers.push(srv);
    const conns = await Promise.all(Array.from({ length: N }, () => rawConnection(srv)));
    // Accepted: answered on a connection opened after them (one accept queue, in order), and
    // closed after its answer, so that nothing but the 128 has anything for the server to read.
    const probe = await rawConnection(srv);
    probe.sock.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nConnection: close\r\n\r\n`);
    while (probe.closedAt === null) await sleep(10);
    assert.match(probe.raw, /^HTTP\/1\.1 200 /);
    await sleep(300);
    const stall = await stallHttpThread(srv, 1000);
    for (const c of conns) {
      const body = JSON.stringify(initializeBody());
      c.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }
    assert.equal(await stall.ended, 0, stall.out());
    const resumed = performance.now();
    const answered = (c) => /^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*"result"/.test(c.raw);
    while (conns.some((c) => !answered(c) && c.closedAt === null) && performance.now() - resumed < SLACK_MS) await sleep(20);
    const waited = performance.now() - resumed;
    const n = conns.filter(answered).length;
    const closed = conns.filter((c) => c.closedAt !== null).length;
    report(t, `${n} of ${N} initializes answered ${waited.toFixed(0)} ms after the HTTP thread ran again; ${closed} connections closed`);
    for (const c of conns) c.sock.destroy();
    assert.equal(n, N, `${N - n} of ${N} requests unanswered ${waited.toFixed(0)} ms after the HTTP thread ran again (${closed} connections closed)`);
  });
});
