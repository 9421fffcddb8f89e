// Shared helpers for the integration tests of mcp-sandbox-computer.
//
// The server is driven two ways:
//   * through the official MCP TypeScript SDK (Client + StdioClientTransport), like a real host;
//   * through raw child_process stdio (RawServer) for malformed input and exact wire checks.
// Containers are inspected with the `docker` CLI. Every test file gets a unique per-run prefix
// (PREFIX) for explicit computer ids; `cleanupContainers()` removes every container labelled
// kilntainers.computer-id whose id starts with that prefix, plus random default computers that a
// test recorded with `track(id)`.
//
// Environment:
//   MSC_BIN        all-in-one binary (default <repo>/build/mcp-sandbox-computer)
//   MSC_RUN_SPLIT  split launcher script (default <repo>/scripts/run-split)
//   MSC_DOCKER     docker CLI (default docker)
//   MSC_TEST_TRACE=1  copy the server's stderr to ours

import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { after as afterAll } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export { sleep };

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..');
export const MSC_BIN = process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer');
export const MSC_RUN_SPLIT = process.env.MSC_RUN_SPLIT || path.join(REPO, 'scripts', 'run-split');
export const DOCKER = process.env.MSC_DOCKER || 'docker';
export const DEFAULT_IMAGE = 'debian:bookworm-slim';
export const TOOL = 'terminal_execute';
const TRACE = process.env.MSC_TEST_TRACE === '1';

/**
 * Servers start with `--warm-pool 0` unless a test passes its own --warm-pool: these tests check
 * the cold path's containers (the reference's exact labels); pool.test.mjs checks the pool.
 */
export const withPoolFlag = (flags) => {
  const out = flags.some((f) => String(f).startsWith('--warm-pool')) ? flags : [...flags, '--warm-pool', '0'];
  return [...out, ...ENGINE_FLAGS];
};
/**
 * MSC_TEST_ENGINE=podman (with DOCKER_HOST at Podman's API socket, which the docker CLI of these
 * tests uses too): every server runs with --engine podman and otherwise its defaults (the sandbox
 * network on), as a user runs it.
 */
export const ENGINE = process.env.MSC_TEST_ENGINE || 'docker';
/** MSC_TEST_RUNTIME=runsc: every server runs its computers under that OCI runtime (--runtime). */
export const RUNTIME = process.env.MSC_TEST_RUNTIME || '';
const ENGINE_FLAGS = [...(ENGINE === 'podman' ? ['--engine', 'podman'] : []),
  ...(RUNTIME ? ['--runtime', RUNTIME] : [])];

/** Per-file, per-run prefix for explicit computer ids: `it<6 hex>-`. */
export const PREFIX = `it${randomBytes(3).toString('hex')}-`;
/** An explicit computer id owned by this test run. */
export const cid = (name) => `${PREFIX}${name}`;

export const TIMEOUT_MARKER = (n) => `[kilntainers: command timed out after ${n}s]`;
export const LIMIT_MARKER = (l) =>
  `[kilntainers: output limit exceeded (${l} bytes). Command terminated. No output returned. ` +
  'Re-run with head, tail, or grep to manage output size.]';
export const SLUG_ERROR =
  'computer_id must be 1-63 lowercase letters, numbers, or hyphens; it must start and end with a letter or number.';
export const ADJECTIVES = ['amber', 'brisk', 'calm', 'clever', 'coral', 'crisp', 'gentle', 'lucky', 'quiet', 'rapid', 'silver', 'steady'];
export const NOUNS = ['badger', 'comet', 'falcon', 'gecko', 'heron', 'lynx', 'otter', 'panda', 'raven', 'tiger', 'whale', 'wolf'];
export const RANDOM_SLUG_RE = new RegExp(`^(${ADJECTIVES.join('|')})-(${NOUNS.join('|')})-[0-9a-f]{4}$`);
export const RESULT_KEYS = ['computer_id', 'temporary', 'stdout', 'stderr', 'exit_code', 'exec_duration_ms'];

// --------------------------------------------------------------------------------------------
// sanitizer reports (ASan/UBSan/LSan builds): any report on a server's stderr fails the file

const SANITIZER_RE = /ERROR: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)|runtime error: |WARNING: ThreadSanitizer/;
const sanitizerReports = [];
/** Scan a server's stderr text for sanitizer reports (called on every chunk's accumulated tail). */
function scanSanitizer(text, who) {
  const m = SANITIZER_RE.exec(text);
  if (m && !sanitizerReports.some((r) => r.who === who)) {
    sanitizerReports.push({ who, excerpt: text.slice(Math.max(0, m.index - 200), m.index + 1500) });
  }
}
let serverSeq = 0;
const sanitizerText = () => sanitizerReports.map((r) => `--- ${r.who}\n${r.excerpt}`).join('\n');
// Checked at process exit, after every hook (servers closed in `after` hooks, e.g. LeakSanitizer
// reports at their exit, are included): a report makes the test file fail through its exit code.
// (A throwing root `after` hook here would run before the files' own cleanup hooks and skip them.)
process.on('exit', () => {
  if (sanitizerReports.length) {
    process.stderr.write(`\nsanitizer reports on server stderr:\n${sanitizerText()}\n`);
    process.exitCode = 1;
  }
});

// --------------------------------------------------------------------------------------------
// every server started through this module is shut down at the end of the file, even when a
// test failed before its own cleanup (an open child process would keep node:test waiting)

const liveServers = new Set();
afterAll(async () => {
  for (const srv of [...liveServers]) {
    try { await srv.close(); } catch { /* best effort */ }
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
/** A TCP port free on loopback now (for a server the test starts). */
export const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

export async function waitFor(fn, { timeoutMs = 10000, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let v;
  for (;;) {
    v = await fn();
    if (v || Date.now() >= deadline) return v;
    await sleep(intervalMs);
  }
}

export function binaryPath(mode = 'aio') {
  return mode === 'split' ? MSC_RUN_SPLIT : MSC_BIN;
}

/** Throws a readable error when the binary under test does not exist. */
export function requireBinary(mode = 'aio') {
  const p = binaryPath(mode);
  if (!existsSync(p)) {
    throw new Error(`binary under test not found: ${p} (build with 'meson setup build && ninja -C build', ` +
      `or set ${mode === 'split' ? 'MSC_RUN_SPLIT' : 'MSC_BIN'})`);
  }
  return p;
}

// --------------------------------------------------------------------------------------------
// docker helpers

export async function docker(args, opts = {}) {
  return run(DOCKER, args, opts);
}

/** Inspect a container by name or id; null when it does not exist. */
export async function inspect(nameOrId) {
  const r = await docker(['container', 'inspect', nameOrId]);
  if (r.code !== 0) return null;
  const arr = JSON.parse(r.stdout);
  return arr[0] ?? null;
}

export const containerName = (id) => `kilntainer-${id}`;

/** Container (inspect JSON) of a computer id, or null. */
export async function containerOf(id) {
  return inspect(containerName(id));
}

/** Every container (running or not) labelled kilntainers.computer-id: [{id, name, computerId, temporary, image, state}]. */
export async function listKilntainers() {
  const r = await docker(['ps', '-aq', '--no-trunc', '--filter', 'label=kilntainers.computer-id']);
  if (r.code !== 0) throw new Error(`docker ps failed: ${r.stderr}`);
  const ids = r.stdout.split('\n').filter(Boolean);
  if (ids.length === 0) return [];
  const ins = await docker(['container', 'inspect', ...ids]);
  // A container may vanish between ps and inspect; inspect then prints what it found and exits 1.
  let arr = [];
  try { arr = JSON.parse(ins.stdout || '[]'); } catch { arr = []; }
  return arr.map((c) => ({
    id: c.Id,
    name: (c.Name || '').replace(/^\//, ''),
    computerId: c.Config?.Labels?.['kilntainers.computer-id'],
    temporary: c.Config?.Labels?.['kilntainers.temporary'],
    image: c.Config?.Labels?.['kilntainers.image'],
    state: c.State?.Status,
    running: !!c.State?.Running,
    labels: c.Config?.Labels ?? {},
  }));
}

/** Names of kilntainers containers of this run (prefix), for before/after comparisons. */
export async function ownContainers() {
  return (await listKilntainers()).filter((c) => c.computerId?.startsWith(PREFIX) || tracked.has(c.computerId));
}

const tracked = new Set();
/** Remember a random (non-prefixed) computer id so that cleanup removes it too. */
export function track(id) {
  if (typeof id === 'string' && id) tracked.add(id);
  return id;
}

/** Remove every container of this run (prefix or tracked ids) and any extra names given. */
export async function cleanupContainers(extraNames = []) {
  let list = [];
  try { list = await listKilntainers(); } catch { list = []; }
  const names = list
    .filter((c) => c.computerId && (c.computerId.startsWith(PREFIX) || tracked.has(c.computerId)))
    .map((c) => c.id);
  for (const n of extraNames) names.push(n);
  if (names.length) await docker(['rm', '-f', ...names]);
  await removeSandboxNetwork();
}

/**
 * The sandbox network the driver makes for computers, and its host packet filter tables: removed
 * once no container uses the network (else `docker network rm` refuses and both stay).
 */
export async function removeSandboxNetwork() {
  const r = await docker(['network', 'rm', 'kilntainers-sandbox']);
  if (r.code !== 0) return;
  for (const family of ['inet', 'bridge']) {
    await run('nft', ['delete', 'table', family, SANDBOX_TABLE]).catch(() => {});
  }
}
/** The driver's nftables tables (inet and bridge) for the sandbox network: Podman's apart from Docker's. */
export const SANDBOX_TABLE = ENGINE === 'podman' ? 'kilntainers_podman' : 'kilntainers_sandbox';
/** The sandbox network's bridge interface on this engine. */
export const SANDBOX_BRIDGE = ENGINE === 'podman' ? 'msc-podman0' : 'msc-sandbox0';

/** Process command lines inside a container (the image has no ps): array of strings, NULs as spaces. */
export async function containerProcesses(ctr) {
  const r = await docker(['exec', ctr, 'sh', '-c', 'for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null; echo; done']);
  if (r.code !== 0) throw new Error(`docker exec ${ctr} failed: ${r.stderr}`);
  return r.stdout.split('\n').map((l) => l.replace(/\0/g, ' ').trim()).filter(Boolean);
}

// --------------------------------------------------------------------------------------------
// SDK-based server sessions

/**
 * Start the server (mode 'aio' = MSC_BIN, 'split' = MSC_RUN_SPLIT) with the given flags, under the
 * `wrap` command line if one is given, and connect an SDK client. Returns a session object:
 *   { client, transport, proc, pid, stderr() -> string, transportErrors[], call(args, opts), close(), kill(sig) }
 */
export async function startServer(flags = [], { mode = 'aio', env = {}, connectTimeoutMs = 30000, protocolVersion, wrap = [] } = {}) {
  const bin = requireBinary(mode);
  flags = withPoolFlag(flags);
  // wrap: a command line the server runs under (e.g. setpriv ... to run it as another user).
  const transport = new StdioClientTransport({
    command: wrap.length ? wrap[0] : bin,
    args: wrap.length ? [...wrap.slice(1), bin, ...flags] : flags,
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  let stderrText = '';
  const who = `server#${++serverSeq} ${path.basename(bin)} ${flags.join(' ')}`;
  transport.stderr.on('data', (c) => {
    stderrText += c.toString('utf8');
    scanSanitizer(stderrText.slice(-20000), who);
    if (stderrText.length > 4_000_000) stderrText = stderrText.slice(-2_000_000);
    if (TRACE) process.stderr.write(c);
  });
  const client = new Client({ name: 'msc-integration-tests', version: '0.1.0' }, { capabilities: {} });
  const transportErrors = [];
  client.onerror = (e) => transportErrors.push(String(e?.message ?? e));
  if (protocolVersion) {
    const send = transport.send.bind(transport);
    transport.send = (msg, o) => send(msg.method === 'initialize'
      ? { ...msg, params: { ...msg.params, protocolVersion } } : msg, o);
  }
  await client.connect(transport, { timeout: connectTimeoutMs });
  // Split: the edge answers initialize alone; its tools/list waits for the session service's
  // description (asked of the first driver), so the link to it is up before the first call
  // (a loaded host's first TLS handshakes can take past a call's 3 s grace).
  if (mode === 'split') await client.listTools(undefined, { timeout: connectTimeoutMs });
  const proc = transport._process; // the SDK forgets it on close(); keep our own handle
  proc.once('exit', () => liveServers.delete(s));
  const s = {
    client,
    transport,
    proc,
    pid: proc?.pid,
    mode,
    flags,
    transportErrors,
    stderr: () => stderrText,
    /** tools/call terminal_execute with the given arguments; returns the raw CallToolResult. */
    call: (args, { timeoutMs = 60000, name = TOOL } = {}) =>
      client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs }),
    /** Like call but asserts success and returns structuredContent. */
    exec: async (args, opts) => {
      const res = await s.call(args, opts);
      assertOkResult(res);
      if (res.structuredContent?.computer_id && !String(res.structuredContent.computer_id).startsWith(PREFIX)) {
        track(res.structuredContent.computer_id);
      }
      return res.structuredContent;
    },
    /** Close stdin (session end by EOF) and wait for the process to exit. Returns {code, signal} or null. */
    eof: async (timeoutMs = 10000) => {
      const exited = waitExit(proc, timeoutMs);
      try { proc.stdin.end(); } catch { /* ignore */ }
      const r = await exited;
      await client.close().catch(() => {});
      return r;
    },
    /** Send a signal and wait for exit. */
    signal: async (sig = 'SIGTERM', timeoutMs = 10000) => {
      const exited = waitExit(proc, timeoutMs);
      proc.kill(sig);
      const r = await exited;
      await client.close().catch(() => {});
      return r;
    },
    /** Best-effort shutdown (EOF, then SIGTERM, then SIGKILL). */
    close: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        try { proc.stdin.end(); } catch { /* ignore */ }
        let r = await waitExit(proc, 8000);
        if (!r) { proc.kill('SIGTERM'); r = await waitExit(proc, 5000); }
        if (!r) { proc.kill('SIGKILL'); await waitExit(proc, 2000); }
      }
      await client.close().catch(() => {});
    },
  };
  if (proc.exitCode === null && proc.signalCode === null) liveServers.add(s);
  return s;
}

/** Text of the first text block of a CallToolResult. */
export function textOf(res) {
  const t = (res?.content ?? []).find((c) => c.type === 'text');
  return t ? t.text : undefined;
}

export function assertOkResult(res) {
  assert.ok(res, 'no result');
  if (res.isError) assert.fail(`tool call failed unexpectedly: ${textOf(res)}`);
  assert.ok(res.structuredContent, `no structuredContent in ${JSON.stringify(res).slice(0, 500)}`);
}

/** Assert an isError result whose text contains every given substring; returns the text. */
export function assertToolError(res, ...needles) {
  assert.ok(res, 'no result');
  assert.equal(res.isError, true, `expected isError:true, got ${JSON.stringify(res).slice(0, 600)}`);
  const text = textOf(res);
  assert.equal(typeof text, 'string', 'isError result has no text block');
  for (const n of needles) {
    if (n instanceof RegExp) assert.match(text, n);
    else assert.ok(text.includes(n), `error text ${JSON.stringify(text)} does not contain ${JSON.stringify(n)}`);
  }
  return text;
}

/**
 * A provider's failure (the reference's later revision): the agent reads only the generic text;
 * the details (needles) reach the server's stderr (`server.stderr()` or `.stderrText`), not the result.
 */
export const CREATE_FAILED = 'Sandbox could not be created or attached';
export const EXEC_FAILED = 'Sandbox execution failed';
export async function assertProviderError(server, res, generic, ...needles) {
  const text = assertToolError(res);
  assert.equal(text, generic);
  const err = () => (typeof server.stderr === 'function' ? server.stderr() : server.stderrText);
  for (const n of needles) {
    assert.ok(await waitFor(() => err().includes(n), { timeoutMs: 5000, intervalMs: 100 }), `stderr lacks ${n}`);
    assert.ok(!JSON.stringify(res).includes(n), `the result shows ${n}`);
  }
  return text;
}

/** Full checks of a successful terminal_execute reply (§2.1 step 6). */
export function assertReplyShape(res) {
  assertOkResult(res);
  const sc = res.structuredContent;
  assert.deepEqual(Object.keys(sc), RESULT_KEYS, 'structuredContent keys and their order');
  assert.equal(typeof sc.computer_id, 'string');
  assert.equal(typeof sc.temporary, 'boolean');
  assert.equal(typeof sc.stdout, 'string');
  assert.equal(typeof sc.stderr, 'string');
  assert.ok(Number.isInteger(sc.exit_code), 'exit_code is an integer');
  assert.ok(Number.isInteger(sc.exec_duration_ms) && sc.exec_duration_ms >= 0, 'exec_duration_ms is a non-negative integer');
  const texts = res.content.filter((c) => c.type === 'text');
  assert.equal(res.content.length, 1, 'exactly one content block');
  assert.equal(texts.length, 1, 'one text block');
  const parsed = JSON.parse(texts[0].text);
  assert.deepEqual(parsed, sc, 'text block JSON equals structuredContent');
  assert.deepEqual(Object.keys(parsed), RESULT_KEYS, 'text block key order');
  return sc;
}

// --------------------------------------------------------------------------------------------
// raw stdio server (newline-delimited JSON-RPC, bytes in / lines out)

export class RawServer {
  constructor(flags = [], { mode = 'aio', env = {} } = {}) {
    const bin = requireBinary(mode);
    flags = withPoolFlag(flags);
    this.proc = spawn(bin, flags, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.lines = [];          // every stdout line (strings)
    this.messages = [];       // parsed stdout lines (null where unparsable)
    this.badLines = [];       // stdout lines that are not JSON-RPC 2.0
    this.stderrText = '';
    this.waiters = [];
    this.nextId = 1000;
    let buf = Buffer.alloc(0);
    this.proc.stdout.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let i;
      while ((i = buf.indexOf(0x0a)) >= 0) {
        const line = buf.subarray(0, i).toString('utf8').replace(/\r$/, '');
        buf = buf.subarray(i + 1);
        this._line(line);
      }
    });
    const who = `raw#${++serverSeq} ${path.basename(bin)} ${flags.join(' ')}`;
    this.proc.stderr.on('data', (c) => {
      this.stderrText += c.toString('utf8');
      scanSanitizer(this.stderrText.slice(-20000), who);
      if (this.stderrText.length > 4_000_000) this.stderrText = this.stderrText.slice(-2_000_000);
      if (TRACE) process.stderr.write(c);
    });
    this.proc.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => {
      liveServers.delete(this);
      resolve({ code, signal });
    }));
    liveServers.add(this);
  }

  _line(line) {
    this.lines.push(line);
    let msg = null;
    try { msg = JSON.parse(line); } catch { msg = null; }
    if (!msg || typeof msg !== 'object' || msg.jsonrpc !== '2.0') this.badLines.push(line);
    this.messages.push(msg);
    for (const w of [...this.waiters]) {
      if (msg && w.pred(msg)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        clearTimeout(w.timer);
        w.resolve(msg);
      }
    }
  }

  get alive() { return this.proc.exitCode === null && this.proc.signalCode === null; }

  /** Write raw bytes/string (a trailing newline is NOT added). */
  write(data) {
    return new Promise((resolve, reject) => {
      this.proc.stdin.write(data, (e) => (e ? reject(e) : resolve()));
    });
  }

  /** Send one JSON value as a line. */
  send(obj) { return this.write(JSON.stringify(obj) + '\n'); }

  /** Wait for the first message (already received or future) matching pred. */
  waitMessage(pred, timeoutMs = 15000, { fromIndex = 0 } = {}) {
    for (let i = fromIndex; i < this.messages.length; i++) {
      const m = this.messages[i];
      if (m && pred(m)) return Promise.resolve(m);
    }
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      w.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for a message; stdout so far: ` +
          JSON.stringify(this.lines.slice(-5)).slice(0, 1000) + `; alive=${this.alive}; stderr tail: ` +
          this.stderrText.slice(-800)));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Response with the given id. */
  response(id, timeoutMs) {
    return this.waitMessage((m) => m.id === id && ('result' in m || 'error' in m), timeoutMs);
  }

  /** Send a request and wait for its response. */
  async request(method, params, { id, timeoutMs = 30000 } = {}) {
    const rid = id ?? this.nextId++;
    const msg = { jsonrpc: '2.0', id: rid, method };
    if (params !== undefined) msg.params = params;
    await this.send(msg);
    return this.response(rid, timeoutMs);
  }

  notify(method, params) {
    const msg = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    return this.send(msg);
  }

  /** initialize + notifications/initialized. Returns the initialize response. */
  async initialize(protocolVersion = '2025-06-18') {
    const r = await this.request('initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'msc-raw-tests', version: '0.1.0' },
    });
    await this.notify('notifications/initialized');
    return r;
  }

  /** Wait until the next ping round-trips (server alive and serving). */
  async ping(timeoutMs = 15000) {
    const r = await this.request('ping', undefined, { timeoutMs });
    return r;
  }

  async close(timeoutMs = 10000) {
    if (!this.alive) return this.exited;
    try { this.proc.stdin.end(); } catch { /* ignore */ }
    const r = await Promise.race([this.exited, sleep(timeoutMs, null, { ref: false })]);
    if (r) return r;
    this.proc.kill('SIGTERM');
    const r2 = await Promise.race([this.exited, sleep(5000, null, { ref: false })]);
    if (r2) return r2;
    this.proc.kill('SIGKILL');
    return this.exited;
  }
}

/** Run the binary with arguments, no stdin interaction (for --help and startup validation). */
export async function runCli(args, { mode = 'aio', timeoutMs = 15000, input = '', env } = {}) {
  const bin = requireBinary(mode);
  const r = await run(bin, args, { input, timeoutMs, env: env ? { ...process.env, ...env } : undefined });
  scanSanitizer(r.stderr, `cli ${path.basename(bin)} ${args.join(' ')}`);
  return r;
}
