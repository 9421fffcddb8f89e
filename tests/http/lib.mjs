// Shared helpers for the Streamable HTTP tests of mcp-sandbox-computer.
//
// The server is started as `MSC_BIN --transport http --host 127.0.0.1 --port <free port> ...` and
// driven three ways:
//   * the official MCP TypeScript SDK (Client + StreamableHTTPClientTransport), like a real host;
//   * raw HTTP/1.1 through node:http (`request`), for exact status codes and headers (node:http,
//     not fetch, so that Host and other headers can be set freely);
//   * raw TCP (node:net) for slow clients.
// Containers are inspected with the `docker` CLI. Every server started here gets
// `--docker-run-flag=--label=msc.http-test-run=<RUN>` so that every container it makes (random
// default ids included) can be found and removed by `cleanupContainers()`; explicit computer ids
// use the per-file prefix PREFIX.
//
// Environment:
//   MSC_BIN         all-in-one binary (default <repo>/build/mcp-sandbox-computer)
//   MSC_DOCKER      docker CLI (default docker)
//   MSC_TEST_TRACE=1  copy the servers' stderr to ours

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after as afterAll } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export { sleep };
/** A sleep that does not keep the process alive (for races against a deadline). */
export const idle = (ms) => sleep(ms, undefined, { ref: false });

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..');
export const MSC_BIN = process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer');
export const DOCKER = process.env.MSC_DOCKER || 'docker';
export const TOOL = 'terminal_execute';
const TRACE = process.env.MSC_TEST_TRACE === '1';

/** Per-file, per-run id: `ht<6 hex>`; explicit computer ids are `ht<6 hex>-<name>`. */
export const RUN = `ht${randomBytes(3).toString('hex')}`;
export const PREFIX = `${RUN}-`;
export const RUN_LABEL = 'msc.http-test-run';
/** An explicit computer id owned by this test run. */
export const cid = (name) => `${PREFIX}${name}`;

export const RESULT_KEYS = ['computer_id', 'temporary', 'stdout', 'stderr', 'exit_code', 'exec_duration_ms'];
export const PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const ROOT_DOC = {
  name: 'mcp-sandbox-computer-vm-for-ai',
  mcp_endpoint: '/mcp',
  dashboard_resource: 'ui://kilntainers/computers',
  health: '/healthz',
};
export const NON_LOOPBACK_ERROR = 'kilntainers: error: A non-loopback HTTP listener can execute arbitrary sandbox commands.';

// --------------------------------------------------------------------------------------------
// sanitizer reports (ASan/UBSan builds): any report on a server's stderr fails the file

const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)|runtime error: |WARNING: ThreadSanitizer/;
const sanitizerReports = [];
function scanSanitizer(text, who) {
  const m = SANITIZER_RE.exec(text);
  if (m && !sanitizerReports.some((r) => r.who === who)) {
    sanitizerReports.push({ who, excerpt: text.slice(Math.max(0, m.index - 200), m.index + 1500) });
  }
}
let sanitizerReported = 0;
const sanitizerText = () => sanitizerReports.map((r) => `--- ${r.who}\n${r.excerpt}`).join('\n');
afterAll(() => {
  if (sanitizerReports.length) {
    sanitizerReported = sanitizerReports.length;
    assert.fail(`sanitizer reports on server stderr:\n${sanitizerText()}`);
  }
});
process.on('exit', () => {
  if (sanitizerReports.length > sanitizerReported) {
    process.stderr.write(`\nsanitizer reports on server stderr:\n${sanitizerText()}\n`);
    process.exitCode = 1;
  }
});

// --------------------------------------------------------------------------------------------
// process helpers

/** Run a program to completion. Resolves {code, signal, stdout, stderr} (never rejects on exit code). */
export function run(cmd, args, { input, timeoutMs = 60000, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
    const out = [];
    const err = [];
    let timer;
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    timer = setTimeout(() => { child.kill('SIGKILL'); }, timeoutMs);
    child.stdin.on('error', () => {});
    if (input !== undefined) child.stdin.end(input); else child.stdin.end();
  });
}

/** Wait for a child process to exit; resolves {code, signal} or null on timeout. */
export function waitExit(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), timeoutMs);
    child.once('exit', (code, signal) => { clearTimeout(t); resolve({ code, signal }); });
  });
}

/** Poll `fn` until it returns a truthy value or the deadline passes; returns the last value. */
export async function waitFor(fn, { timeoutMs = 10000, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let v;
  for (;;) {
    v = await fn();
    if (v || Date.now() >= deadline) return v;
    await sleep(intervalMs);
  }
}

export function requireBinary() {
  if (!existsSync(MSC_BIN)) {
    throw new Error(`binary under test not found: ${MSC_BIN} (build with 'meson setup build && ninja -C build', or set MSC_BIN)`);
  }
  return MSC_BIN;
}

/** A free TCP port on 127.0.0.1 (bind port 0, read it, close). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS of a process in kB (from /proc/<pid>/status), or NaN. */
export function rssKb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Number of threads of a process (from /proc/<pid>/status), or NaN. */
export function threadCount(pid) {
  try {
    const m = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

// --------------------------------------------------------------------------------------------
// the HTTP server under test

let serverSeq = 0;
const liveServers = new Set();

/**
 * Start `MSC_BIN --transport http --host <host> --port <free port> <flags>` and wait for /healthz.
 * Options: env (merged over process.env minus KILNTAINERS_AUTH_TOKEN and the allowlist variables
 * unless given), host,
 * readyTimeoutMs, label (false: no run label flag), wrap (a command line the server is started
 * under, e.g. ['prlimit', '--nofile=1024:1024', '--']). Returns a HttpServer.
 */
export async function startHttpServer(flags = [], { env = {}, host = '127.0.0.1', readyTimeoutMs = 20000, label = true, wrap = [] } = {}) {
  const bin = requireBinary();
  const port = await freePort();
  const baseEnv = { ...process.env };
  delete baseEnv.KILNTAINERS_AUTH_TOKEN;
  delete baseEnv.KILNTAINERS_ALLOWED_HOSTS;
  delete baseEnv.KILNTAINERS_ALLOWED_ORIGINS;
  const args = ['--transport', 'http', '--host', host, '--port', String(port), ...flags];
  // The cold path unless the test asks for a pool (tests/integration/pool.test.mjs checks it).
  if (!flags.some((f) => String(f).startsWith('--warm-pool'))) args.push('--warm-pool', '0');
  if (label) args.push(`--docker-run-flag=--label=${RUN_LABEL}=${RUN}`);
  const cmd = wrap.length ? [...wrap, bin, ...args] : [bin, ...args];
  const proc = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...baseEnv, ...env } });
  const who = `http#${++serverSeq} ${args.join(' ')}`;
  const srv = new HttpServer(proc, port, who);
  liveServers.add(srv);
  const connectHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host === '::1' ? '[::1]' : host === 'localhost' ? 'localhost' : host;
  srv.connectHost = connectHost;
  const ok = await waitFor(async () => {
    if (!srv.alive) return 'exited';
    try {
      const r = await request(srv, { method: 'GET', path: '/healthz', timeoutMs: 1000 });
      return r.status === 200 ? 'ready' : null;
    } catch {
      return null;
    }
  }, { timeoutMs: readyTimeoutMs, intervalMs: 100 });
  if (ok !== 'ready') {
    srv.stopping = true;
    const ex = await waitExit(proc, 200);
    await srv.stop('SIGKILL');
    throw new Error(`HTTP server did not become ready (${ok ?? 'timeout'}; exit ${JSON.stringify(ex)}): ${who}\n` +
      `stderr tail: ${srv.stderr().slice(-2000)}`);
  }
  return srv;
}

export class HttpServer {
  constructor(proc, port, who) {
    this.proc = proc;
    this.pid = proc.pid;
    this.port = port;
    this.who = who;
    this.connectHost = '127.0.0.1';
    this.stdoutText = '';
    this.stderrText = '';
    proc.stdout.on('data', (c) => { this.stdoutText += c.toString('utf8'); });
    proc.stderr.on('data', (c) => {
      this.stderrText += c.toString('utf8');
      scanSanitizer(this.stderrText.slice(-20000), who);
      if (this.stderrText.length > 4_000_000) this.stderrText = this.stderrText.slice(-2_000_000);
      if (TRACE) process.stderr.write(c);
    });
    this.stopping = false;
    this.exited = new Promise((resolve) => proc.on('exit', (code, signal) => {
      if (!this.stopping) {
        unexpectedExits.push(`${who}: exited on its own (code ${code}, signal ${signal}); stderr tail:\n${this.stderrText.slice(-1500)}`);
      }
      resolve({ code, signal });
    }));
  }

  get alive() { return this.proc.exitCode === null && this.proc.signalCode === null; }
  get base() { return `http://${this.connectHost}:${this.port}`; }
  get url() { return `${this.base}/mcp`; }
  get hostHeader() { return `${this.connectHost}:${this.port}`; }
  stderr() { return this.stderrText; }
  stdout() { return this.stdoutText; }
  rssKb() { return rssKb(this.pid); }

  /** Send a signal and wait for exit; {code, signal} or null on timeout. */
  async signal(sig = 'SIGTERM', timeoutMs = 15000) {
    this.stopping = true;
    if (!this.alive) return { code: this.proc.exitCode, signal: this.proc.signalCode };
    this.proc.kill(sig);
    return Promise.race([this.exited, idle(timeoutMs).then(() => null)]);
  }

  /** Best-effort stop: SIGTERM, then SIGKILL. */
  async stop(first = 'SIGTERM') {
    liveServers.delete(this);
    if (!this.alive) return this.exited;
    let r = await this.signal(first, first === 'SIGKILL' ? 5000 : 15000);
    if (!r) r = await this.signal('SIGKILL', 5000);
    return r;
  }
}

// Never leave a server behind, even when a test throws before its own cleanup; a server that
// died on its own (crash, early exit) fails the file with its exit status and stderr.
const unexpectedExits = [];
afterAll(async () => {
  for (const s of [...liveServers]) await s.stop();
  if (unexpectedExits.length) assert.fail(`server(s) died during the tests:\n${unexpectedExits.join('\n')}`);
});

// --------------------------------------------------------------------------------------------
// raw HTTP (node:http): exact status codes and headers

const keepAliveAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One HTTP request to the server. opts: method, path (default /mcp), headers (exact; Host is
 * added unless given), body (string/Buffer/object → JSON), session (Mcp-Session-Id), token
 * (Authorization: Bearer), json (true: add the MCP Content-Type and Accept), protocolVersion,
 * agent (default: a fresh connection per request), timeoutMs.
 * Resolves {status, headers, text, json (parsed JSON body or the first SSE data message or null)}.
 */
export function request(srv, opts = {}) {
  const {
    method = 'POST', path: p = '/mcp', headers = {}, session, token, protocolVersion,
    json = method === 'POST', timeoutMs = 30000, keepAlive = false,
  } = opts;
  let { body } = opts;
  if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) body = JSON.stringify(body);
  const h = {};
  if (json) {
    h['Content-Type'] = 'application/json';
    h.Accept = 'application/json, text/event-stream';
  }
  if (session) h['Mcp-Session-Id'] = session;
  if (token) h.Authorization = `Bearer ${token}`;
  if (protocolVersion) h['MCP-Protocol-Version'] = protocolVersion;
  for (const [k, v] of Object.entries(headers)) {
    for (const kk of Object.keys(h)) if (kk.toLowerCase() === k.toLowerCase()) delete h[kk];
    if (v !== undefined && v !== null) h[k] = v;
  }
  if (body !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')) {
    h['Content-Length'] = Buffer.byteLength(body);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: srv.connectHost.replace(/^\[|\]$/g, ''),
      port: srv.port,
      method,
      path: p,
      headers: h,
      agent: keepAlive ? keepAliveAgent : false,
      setHost: !Object.keys(h).some((k) => k.toLowerCase() === 'host'),
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, headers: res.headers, text, json: parseBody(text, res.headers['content-type']) });
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`request ${method} ${p} timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => { clearTimeout(timer); reject(e); });
    if (body !== undefined) req.end(body); else req.end();
  });
}

function parseBody(text, ctype = '') {
  if (!text) return null;
  if (/^text\/event-stream/i.test(ctype)) {
    for (const line of text.split(/\r?\n/)) {
      if (line.startsWith('data:')) {
        try { return JSON.parse(line.slice(5).trim()); } catch { /* next */ }
      }
    }
    return null;
  }
  try { return JSON.parse(text); } catch { return null; }
}

let rawId = 1;
export const rpc = (method, params, id = rawId++) => (params === undefined
  ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
export const initializeBody = (protocolVersion = PROTOCOL_VERSION, id = rawId++) => rpc('initialize', {
  protocolVersion,
  capabilities: {},
  clientInfo: { name: 'msc-http-tests', version: '0.1.0' },
}, id);

/**
 * Raw initialize + notifications/initialized. Returns {session, res} and asserts 200 + session id.
 */
export async function rawSession(srv, { token, headers = {}, keepAlive = false, protocolVersion = PROTOCOL_VERSION } = {}) {
  const res = await request(srv, { body: initializeBody(protocolVersion), token, headers, keepAlive });
  assert.equal(res.status, 200, `initialize status (body ${res.text.slice(0, 300)})`);
  const session = res.headers['mcp-session-id'];
  assert.ok(session, 'initialize reply carries Mcp-Session-Id');
  const n = await request(srv, {
    body: { jsonrpc: '2.0', method: 'notifications/initialized' }, session, token, headers, keepAlive, protocolVersion,
  });
  assert.equal(n.status, 202, `notifications/initialized status (body ${n.text.slice(0, 300)})`);
  return { session, res };
}

// --------------------------------------------------------------------------------------------
// SDK sessions (Client + StreamableHTTPClientTransport)

/**
 * Connect one SDK client (one MCP session). Returns
 *   { client, transport, sessionId, transportErrors[], call(args, opts), exec(args, opts), terminate(), close() }.
 */
export async function connect(srv, { token, headers = {}, name = 'msc-http-tests', timeoutMs = 30000 } = {}) {
  const h = { ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  const transport = new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: h } });
  const client = new Client({ name, version: '0.1.0' }, { capabilities: {} });
  const transportErrors = [];
  client.onerror = (e) => transportErrors.push(String(e?.message ?? e));
  await client.connect(transport, { timeout: timeoutMs });
  const s = {
    client,
    transport,
    sessionId: transport.sessionId,
    transportErrors,
    call: (args, { timeoutMs: t = 60000, name: tool = TOOL } = {}) =>
      client.callTool({ name: tool, arguments: args }, undefined, { timeout: t }),
    exec: async (args, opts) => assertReplyShape(await s.call(args, opts)),
    /** DELETE the session (SDK terminateSession), then close the client. */
    terminate: async () => {
      await transport.terminateSession();
      await client.close().catch(() => {});
    },
    /** Close the client without DELETE (the session stays on the server). */
    close: async () => { await client.close().catch(() => {}); },
  };
  return s;
}

/** Text of the first text block of a CallToolResult. */
export function textOf(res) {
  const t = (res?.content ?? []).find((c) => c.type === 'text');
  return t ? t.text : undefined;
}

/** Checks of a successful terminal_execute reply; returns structuredContent. */
export function assertReplyShape(res) {
  assert.ok(res, 'no result');
  if (res.isError) assert.fail(`tool call failed unexpectedly: ${textOf(res)}`);
  const sc = res.structuredContent;
  assert.ok(sc, `no structuredContent in ${JSON.stringify(res).slice(0, 500)}`);
  assert.deepEqual(Object.keys(sc), RESULT_KEYS, 'structuredContent keys and their order');
  assert.equal(typeof sc.computer_id, 'string');
  assert.equal(typeof sc.temporary, 'boolean');
  assert.ok(Number.isInteger(sc.exit_code), 'exit_code is an integer');
  assert.deepEqual(JSON.parse(textOf(res)), sc, 'text block JSON equals structuredContent');
  return sc;
}

// --------------------------------------------------------------------------------------------
// docker helpers

export async function docker(args, opts = {}) {
  return run(DOCKER, args, opts);
}

export const containerName = (id) => `kilntainer-${id}`;

/** Inspect JSON of a computer's container, or null when it does not exist. */
export async function containerOf(id) {
  const r = await docker(['container', 'inspect', containerName(id)]);
  if (r.code !== 0) return null;
  return JSON.parse(r.stdout)[0] ?? null;
}

/** Wait until a computer's container is gone; true when it is. */
export const gone = (id, timeoutMs = 10000) => waitFor(async () => (await containerOf(id)) === null, { timeoutMs, intervalMs: 250 });

/** Containers made by this run's servers: [{id, name, computerId, temporary, running}]. */
export async function runContainers() {
  const r = await docker(['ps', '-aq', '--no-trunc', '--filter', 'label=kilntainers.computer-id']);
  if (r.code !== 0) throw new Error(`docker ps failed: ${r.stderr}`);
  const ids = r.stdout.split('\n').filter(Boolean);
  if (!ids.length) return [];
  const ins = await docker(['container', 'inspect', ...ids]);
  let arr = [];
  try { arr = JSON.parse(ins.stdout || '[]'); } catch { arr = []; }
  return arr.map((c) => ({
    id: c.Id,
    name: (c.Name || '').replace(/^\//, ''),
    computerId: c.Config?.Labels?.['kilntainers.computer-id'],
    temporary: c.Config?.Labels?.['kilntainers.temporary'],
    run: c.Config?.Labels?.[RUN_LABEL],
    running: !!c.State?.Running,
  })).filter((c) => c.run === RUN || c.computerId?.startsWith(PREFIX));
}

/** Remove every container of this run (run label or id prefix). */
export async function cleanupContainers() {
  let list = [];
  try { list = await runContainers(); } catch { list = []; }
  if (list.length) await docker(['rm', '-f', ...list.map((c) => c.id)]);
  // The sandbox network the driver made, and its host rules, once no container uses it.
  if ((await docker(['network', 'rm', 'kilntainers-sandbox'])).code === 0) {
    for (const f of ['inet', 'bridge']) await run('nft', ['delete', 'table', f, 'kilntainers_sandbox']).catch(() => {});
  }
}

export async function dockerAvailable() {
  const r = await docker(['info', '--format', '{{.ServerVersion}}']).catch(() => ({ code: 1 }));
  return r.code === 0;
}

/**
 * One request over a raw TCP connection, for bodies the server may refuse before reading them
 * (413): writes the head and the body, ignores write errors (EPIPE/ECONNRESET once the server has
 * answered and closed), and parses whatever response arrived. Resolves
 * {status (number or null), head, text, writeError, readError}.
 */
export function rawExchange(srv, { method = 'POST', path: p = '/mcp', headers = {}, body = Buffer.alloc(0), chunked = false, timeoutMs = 30000 } = {}) {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const h = {
    Host: srv.hostHeader,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Connection: 'close',
    ...headers,
  };
  if (chunked) h['Transfer-Encoding'] = 'chunked';
  else if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-length')) h['Content-Length'] = String(b.length);
  const head = `${method} ${p} HTTP/1.1\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  return new Promise((resolve) => {
    const sock = net.connect(srv.port, srv.connectHost.replace(/^\[|\]$/g, ''));
    const chunks = [];
    const st = { writeError: null, readError: null };
    const finish = () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
      const i = raw.indexOf('\r\n\r\n');
      resolve({
        status: m ? Number(m[1]) : null,
        head: i >= 0 ? raw.slice(0, i) : raw,
        text: i >= 0 ? Buffer.from(raw.slice(i + 4), 'latin1').toString('utf8') : '',
        ...st,
      });
    };
    const timer = setTimeout(() => { st.readError = 'timeout'; sock.destroy(); }, timeoutMs);
    sock.on('data', (d) => {
      chunks.push(d);
      // a complete response with Content-Length: done
      const raw = Buffer.concat(chunks).toString('latin1');
      const i = raw.indexOf('\r\n\r\n');
      const cl = /\r\ncontent-length:\s*(\d+)/i.exec(raw.slice(0, i + 2));
      if (i >= 0 && cl && Buffer.byteLength(raw, 'latin1') - (i + 4) >= Number(cl[1])) sock.destroy();
    });
    sock.on('error', (e) => { if (chunks.length === 0) st.readError = e.code ?? e.message; });
    sock.on('close', finish);
    sock.on('connect', async () => {
      const write = (buf) => new Promise((r) => {
        if (sock.destroyed) { r(false); return; }
        sock.write(buf, (e) => { if (e && !st.writeError) st.writeError = e.code ?? e.message; r(!e); });
      });
      await write(Buffer.from(head));
      // Like `Expect: 100-continue`: give the server 300 ms to answer from the head alone (413
      // on Content-Length) before sending the body, so that its answer cannot be lost to a
      // reset caused by body bytes it never reads.
      for (let waited = 0; waited < 300 && chunks.length === 0 && !sock.destroyed; waited += 10) await sleep(10);
      // Small pieces, yielding between them, and no more writing once a response has started:
      // a server that answers 413 and closes makes further writes fail (EPIPE), and Node then
      // drops whatever it had not read yet.
      const step = 32 * 1024;
      for (let off = 0; off < b.length && !sock.destroyed && chunks.length === 0; off += step) {
        await new Promise((r) => setImmediate(r));
        if (chunks.length) break;
        const part = b.subarray(off, off + step);
        if (chunked) await write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
        else await write(part);
      }
      if (chunked && !sock.destroyed && chunks.length === 0) await write(Buffer.from('0\r\n\r\n'));
    });
  });
}

/** True when the process has AddressSanitizer's runtime mapped (a sanitizer build). */
export function isSanitized(pid) {
  try {
    return /libasan|libclang_rt\.asan/.test(readFileSync(`/proc/${pid}/maps`, 'utf8'));
  } catch {
    return false;
  }
}

/** Status lines of every HTTP response in `raw`. */
export const statuses = (raw) => [...raw.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));

/**
 * Writes `payload` in one piece on a new connection to `server` and collects what comes back
 * until the server closes or `quietMs` pass without data. Resolves {raw, closed}.
 */
export function exchange(server, payload, { quietMs = 1500 } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect(server.port, '127.0.0.1');
    let raw = '';
    let timer;
    const done = (closed) => { clearTimeout(timer); sock.destroy(); resolve({ raw, closed }); };
    const arm = () => { clearTimeout(timer); timer = setTimeout(() => done(false), quietMs); };
    sock.on('connect', () => { sock.write(payload); arm(); });
    sock.on('data', (d) => { raw += d.toString('latin1'); arm(); });
    sock.on('error', () => {});
    sock.on('close', () => done(true));
  });
}
