// Connection shares (issue 27, "Connections"): one client's idle connections cannot lock out the
// others that share its address (every client on loopback, every client behind one proxy). When
// a client address's share (--max-address-connections, default 256) or the limit on all is
// full, a new connection closes the oldest one without a request in flight instead of being
// refused; a request in flight (a running command, an SSE stream) is never closed for it. Behind
// a proxy named by --trusted-proxy, each request counts in the share of the client that its
// X-Forwarded-For (else Forwarded) header names; from anyone else those headers are ignored.
// The first test needs no container; the others run `sleep` in one (without network: with it,
// the in-flight case under ASan once found a fifth connection served, not yet explained).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startHttpServer, run, MSC_BIN, request, initializeBody, rawSession, cleanupContainers, cid, sleep, PROTOCOL_VERSION } from './lib.mjs';

const report = (t, msg) => { t.diagnostic(msg); process.stderr.write(`http-connections: ${msg}\n`); };

const servers = [];
after(async () => {
  for (const s of servers) await s.stop();
  await cleanupContainers();
});

/** One request on a fresh connection from localAddress: {status, text} or {status: null, error}. */
function send(srv, { localAddress = '127.0.0.1', method = 'POST', path = '/mcp', headers = {}, body, timeoutMs = 60000 } = {}) {
  const b = body === undefined ? undefined : JSON.stringify(body);
  const h = { Host: srv.hostHeader, ...headers };
  if (b !== undefined) {
    Object.assign(h, { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(b) });
  }
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: srv.port, localAddress, method, path, headers: h, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', (e) => resolve({ status: null, error: e.code ?? e.message }));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: null, error: e.code ?? e.message }));
    req.end(b);
  });
}

/** The JSON-RPC result of a JSON or SSE reply. */
function resultOf(text) {
  const data = text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  const msg = data.length ? data.find((m) => 'result' in m || 'error' in m) : JSON.parse(text);
  return msg?.result;
}

let nextId = 1;
const exec = (session, args, meta) => ({
  jsonrpc: '2.0', id: nextId++, method: 'tools/call',
  params: { name: 'terminal_execute', arguments: args, ...(meta ? { _meta: meta } : {}) },
});
const sessionHeaders = (session, extra = {}) => ({ 'Mcp-Session-Id': session, 'MCP-Protocol-Version': PROTOCOL_VERSION, ...extra });

/** A keep-alive connection from localAddress that made one request and now sits idle. */
async function idleConnection(srv, agent) {
  const r = await new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: srv.port, path: '/healthz', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', (e) => resolve(e.code));
    req.end();
  });
  return r;
}

describe('idle connections make room', () => {
  // The measured incident: with the descriptor soft limit at 1024, one client holding 256 idle
  // keep-alive connections left 0 of 56 requests from the same address served.
  it('256 idle keep-alive connections from one address: 56 new requests from it are all served', async (t) => {
    const srv = await startHttpServer([], { wrap: ['prlimit', '--nofile=1024:1024', '--'] });
    servers.push(srv);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256, timeout: 60000 });
    let closed = 0;
    agent.on('free', (sock) => { if (!sock.counted) { sock.counted = true; sock.on('close', () => { closed++; }); } });
    try {
      const held = await Promise.all(Array.from({ length: 256 }, () => idleConnection(srv, agent)));
      assert.deepEqual([...new Set(held)], [200], 'the 256 connections were served once');
      await sleep(300);
      const t0 = performance.now();
      const answers = await Promise.all(Array.from({ length: 56 }, () => request(srv, { body: initializeBody(), timeoutMs: 10000 })
        .catch((e) => ({ status: null, error: e.code ?? e.message }))));
      const ms = performance.now() - t0;
      const served = answers.filter((r) => r.status === 200).length;
      await sleep(300);
      report(t, `256 idle connections from 127.0.0.1, then 56 initialize from it: ${served} served in ${ms.toFixed(0)} ms; ` +
        `${closed} idle connections closed to make room`);
      assert.equal(served, 56, `served ${served} of 56: ${JSON.stringify(answers.find((r) => r.status !== 200))}`);
      assert.ok(closed >= 56, `${closed} idle connections closed`);
      assert.match(srv.stderr(), /256 per client address/);
    } finally {
      agent.destroy();
    }
  });
});

describe('requests in flight are never closed to make room', () => {
  it('--max-address-connections 4: four commands in flight (one an SSE stream) run to their end; a fifth connection is refused, not them', async (t) => {
    const srv = await startHttpServer(['--max-address-connections', '4', '--no-network']);
    servers.push(srv);
    const { session } = await rawSession(srv);
    const h = sessionHeaders(session);
    const first = await send(srv, { headers: h, body: exec(session, { command: 'true', computer_id: cid('inflight') }), timeoutMs: 180000 });
    assert.equal(resultOf(first.text)?.structuredContent?.exit_code, 0, first.text ?? first.error);

    const t0 = performance.now();
    const sleeps = [0, 1, 2, 3].map((i) => send(srv, {
      headers: h,
      body: exec(session, { command: 'sleep 3; echo done', computer_id: cid('inflight') }, i === 0 ? { progressToken: 'p1' } : undefined),
    }));
    await sleep(1000);
    const fifth = await send(srv, { method: 'GET', path: '/healthz', timeoutMs: 5000 });
    const done = await Promise.all(sleeps);
    report(t, `a fifth connection while four commands ran: ${fifth.status ?? fifth.error}; the four: ` +
      `${done.map((r) => r.status ?? r.error).join(', ')} after ${(performance.now() - t0).toFixed(0)} ms`);
    // The four first: one that ended early would free its slot for the fifth.
    for (const r of done) {
      assert.equal(r.status, 200, r.error);
      assert.equal(resultOf(r.text)?.structuredContent?.stdout, 'done\n', r.text.slice(0, 300));
    }
    assert.equal(fifth.status, null, 'the fifth connection is refused: every one of the four has a request in flight');
    assert.match(done[0].text, /^data:/m, 'the first reply was an SSE stream');
    // Once they have ended, the address is served again.
    assert.equal((await send(srv, { method: 'GET', path: '/healthz' })).status, 200);
  });
});

describe('--trusted-proxy', () => {
  it('a trusted proxy\'s requests count in the forwarded client\'s share; anyone else\'s forwarding headers are ignored', async (t) => {
    // The share from the environment form: 2 connections per client.
    const srv = await startHttpServer(['--trusted-proxy', '127.0.0.2', '--no-network'], { env: { KILNTAINERS_MAX_ADDRESS_CONNECTIONS: '2' } });
    servers.push(srv);
    const { session } = await rawSession(srv);
    const h = (extra) => sessionHeaders(session, extra);
    const first = await send(srv, { headers: h(), body: exec(session, { command: 'true', computer_id: cid('proxy') }), timeoutMs: 180000 });
    assert.equal(resultOf(first.text)?.structuredContent?.exit_code, 0, first.text ?? first.error);
    const sleep3 = (localAddress, xff) => send(srv, {
      localAddress, headers: h({ 'X-Forwarded-For': xff }), body: exec(session, { command: 'sleep 3; echo done', computer_id: cid('proxy') }),
    });
    const list = (localAddress, extra) => send(srv, { localAddress, headers: h(extra), body: { jsonrpc: '2.0', id: nextId++, method: 'tools/list' }, timeoutMs: 5000 });

    // Client 10.0.0.1 fills its share through the proxy; 127.0.0.3 (not trusted) fills its own.
    const running = [sleep3('127.0.0.2', '10.0.0.1'), sleep3('127.0.0.2', '10.0.0.1'),
      sleep3('127.0.0.3', '10.0.0.3'), sleep3('127.0.0.3', '10.0.0.4')];
    await sleep(1000);
    const viaProxy = await list('127.0.0.2', { 'X-Forwarded-For': '10.0.0.1' });
    const spoofed = await list('127.0.0.2', { 'X-Forwarded-For': '10.0.0.9, 10.0.0.1' });
    const forwarded = await list('127.0.0.2', { Forwarded: 'for=10.0.0.1;proto=http' });
    // 16 lines of the client's own before the proxy's: the proxy's line is still the one read.
    const manyLines = await list('127.0.0.2', { 'X-Forwarded-For': [...Array(16).fill('10.0.0.7'), '10.0.0.1'] });
    const other = await list('127.0.0.2', { 'X-Forwarded-For': '10.0.0.2' });
    const otherV6 = await list('127.0.0.2', { Forwarded: 'for="[2001:db8::1]:4711"' });
    const untrusted = await list('127.0.0.3', { 'X-Forwarded-For': '10.0.0.5' });
    const done = await Promise.all(running);
    report(t, `10.0.0.1 at its share via the proxy: ${viaProxy.status}; spoofed left entry: ${spoofed.status}; ` +
      `Forwarded: ${forwarded.status}; 10.0.0.2: ${other.status}; 2001:db8::1: ${otherV6.status}; ` +
      `127.0.0.3 with its own X-Forwarded-For: ${untrusted.status ?? untrusted.error}; the four commands: ${done.map((r) => r.status).join(', ')}`);
    assert.equal(viaProxy.status, 429, viaProxy.text ?? viaProxy.error);
    assert.match(viaProxy.text, /--max-address-connections/);
    assert.equal(spoofed.status, 429, 'what the client wrote left of the proxy\'s entry is not believed');
    assert.equal(forwarded.status, 429, 'Forwarded names the client as well');
    assert.equal(manyLines.status, 429, 'lines a client wrote first do not push the proxy\'s own out of reading');
    assert.equal(other.status, 200, 'another client through the same proxy is served (5 connections from it, share 2)');
    assert.equal(otherV6.status, 200);
    assert.equal(untrusted.status, null, 'an untrusted peer\'s X-Forwarded-For is ignored: its own share is full');
    for (const r of done) assert.equal(resultOf(r.text)?.structuredContent?.stdout, 'done\n', r.text?.slice(0, 300) ?? r.error);
  });

  it('a bad --trusted-proxy entry stops the server with an error that names it', async () => {
    const r = await run(MSC_BIN, ['--transport', 'http', '--port', '0', '--warm-pool', '0', '--trusted-proxy', '10.0.0.0/8,10.0.0.0/33'],
      { timeoutMs: 20000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /kilntainers: error: --trusted-proxy: '10\.0\.0\.0\/33' is not an IP address or ADDR\/PREFIX\./);
  });
});
