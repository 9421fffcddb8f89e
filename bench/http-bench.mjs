#!/usr/bin/env node
// http-bench.mjs: terminal_execute latency and throughput over the Streamable HTTP transport on
// the Docker backend, next to a bare `docker exec` of the same command on the same containers
// in the same run, and the server's memory with idle sessions.
//
//   node bench/http-bench.mjs [--bin PATH] [--concurrency 1,8,64] [--calls-per-session 25]
//                             [--min-calls 200] [--warmup 5] [--idle-sessions 1000]
//                             [--command true] [--flag SERVER_FLAG]... [--json out.json]
//
// Scenarios (each call is one tools/call terminal_execute {command, computer_id}):
//   C sessions  one server process; C SDK clients (StreamableHTTPClientTransport), each its own
//               Mcp-Session-Id and its own computer; max(min-calls, C × calls-per-session) calls
//               in total, each session making its calls one after another, all sessions at once
//   docker exec the same number of `docker exec <container> <command>` over the same C
//               containers, C at a time
//   idle        a fresh server: VmRSS (/proc/<pid>/status) after start and one session, then with
//               N more sessions opened (initialize + notifications/initialized) and never closed
// Session setup, computer creation and warm-up are outside the timed windows. Prints markdown
// tables on stdout (JSON with --json). Containers are removed at the end. Exits 1 when any call
// failed (an error, isError, a non-zero exit code, a 120 s timeout), the warm-up's and the
// docker exec baseline's included, when a session could not be opened or the server exited
// before it was stopped or did not exit 0 on SIGTERM.

import path from 'node:path';
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'http', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!existsSync(SDK)) {
  process.stderr.write(`http-bench: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'http')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'streamableHttp.js')).href);

function parseArgs(argv) {
  const o = {
    bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'),
    concurrency: [1, 8, 64], callsPerSession: 25, minCalls: 200, warmup: 5, idleSessions: 1000,
    command: 'true', flags: [], json: null, docker: process.env.MSC_DOCKER || 'docker',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    switch (a) {
      case '--bin': o.bin = v(); break;
      case '--concurrency': o.concurrency = v().split(',').map(Number); break;
      case '--calls-per-session': o.callsPerSession = Number(v()); break;
      case '--min-calls': o.minCalls = Number(v()); break;
      case '--warmup': o.warmup = Number(v()); break;
      case '--idle-sessions': o.idleSessions = Number(v()); break;
      case '--command': o.command = v(); break;
      case '--flag': o.flags.push(v()); break;
      case '--json': o.json = v(); break;
      case '-h': case '--help':
        process.stdout.write('usage: node bench/http-bench.mjs [--bin PATH] [--concurrency 1,8,64] [--calls-per-session N] ' +
          '[--min-calls N] [--warmup W] [--idle-sessions N] [--command CMD] [--flag SERVER_FLAG]... [--json FILE]\n');
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default: process.stderr.write(`http-bench: unknown argument ${a}\n`); process.exit(2);
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
if (!existsSync(opts.bin)) {
  process.stderr.write(`http-bench: binary not found: ${opts.bin}\n`);
  process.exit(1);
}
const RUN = `hbench${randomBytes(3).toString('hex')}`;
const LABEL = `msc.http-bench-run=${RUN}`;
const log = (m) => process.stderr.write(`http-bench: ${m}\n`);

// ------------------------------------------------------------------------------------------
// helpers

function pct(sorted, p) {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

function stats(lat, elapsedMs, errors = 0) {
  const s = [...lat].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    calls: s.length, errors, elapsedMs,
    p50: pct(s, 50), p95: pct(s, 95), p99: pct(s, 99), mean, min: s[0], max: s[s.length - 1],
    callsPerSec: s.length / (elapsedMs / 1000),
  };
}

function runOnce(cmd, args) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => { out += d; });
    c.stderr.on('data', (d) => { err += d; });
    c.on('close', (code) => resolve({ code, out, err }));
    c.on('error', (e) => resolve({ code: -1, out, err: String(e) }));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

function rssKb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch { return NaN; }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
function post(port, body, headers = {}) {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/mcp', agent,
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
        'Content-Length': Buffer.byteLength(data), ...headers,
      },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function startServer() {
  const port = await freePort();
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(opts.bin, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port),
    `--docker-run-flag=--label=${LABEL}`, ...opts.flags], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 20000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited at startup: ${stderr}`);
    const ok = await new Promise((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => { res.resume(); resolve(res.statusCode === 200); })
        .on('error', () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline) { proc.kill('SIGKILL'); throw new Error(`server not ready: ${stderr}`); }
    await sleep(100);
  }
  return {
    port, proc, url: new URL(`http://127.0.0.1:${port}/mcp`),
    gone: () => proc.exitCode !== null || proc.signalCode !== null,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        failures++;
        log(`the server exited before it was stopped (${proc.exitCode ?? proc.signalCode}); its stderr ends with:\n${stderr}`);
      } else {
        proc.kill('SIGTERM');
        const r = await Promise.race([exited, sleep(20000, null, { ref: false })]);
        if (!r) { proc.kill('SIGKILL'); await exited; }
        // It exits 0 on SIGTERM: anything else is a crash or, under ASan, a leak.
        if (r && r.code !== 0) {
          failures++;
          log(`the server exited ${r.code ?? r.signal} after SIGTERM; its stderr ends with:\n${stderr}`);
        }
      }
    },
  };
}

async function openSession(srv, i) {
  const transport = new StreamableHTTPClientTransport(srv.url);
  const client = new Client({ name: 'msc-http-bench', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  return { client, transport, computerId: `${RUN}-s${i}` };
}

// Every failed call and baseline, the warm-up's included, and a server that exited before it was
// stopped: any makes the exit status 1.
let failures = 0;

async function callOnce(s) {
  const t = performance.now();
  let ok = false;
  try {
    const r = await s.client.callTool({ name: 'terminal_execute', arguments: { command: opts.command, computer_id: s.computerId } },
      undefined, { timeout: 120000 });
    ok = !r.isError && r.structuredContent?.exit_code === 0;
    if (!ok) log(`call failed: ${JSON.stringify(r).slice(0, 300)}`);
  } catch (e) {
    log(`call failed: ${e.message}`);
  }
  if (!ok) failures++;
  return { ms: performance.now() - t, ok };
}

async function cleanup() {
  const r = await runOnce(opts.docker, ['ps', '-aq', '--filter', `label=${LABEL}`]);
  const ids = r.out.split('\n').filter(Boolean);
  if (ids.length) await runOnce(opts.docker, ['rm', '-f', ...ids]);
}

/**
 * Spread `total` calls over workers (one per session), each taking the next call while any remain
 * and the server `srv` is up.
 */
async function drive(srv, workers, total, fn) {
  const lat = [];
  let errors = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(workers.map(async (w) => {
    while (next < total && !srv.gone()) {
      next++;
      const r = await fn(w);
      lat.push(r.ms);
      if (!r.ok) errors++;
    }
  }));
  return stats(lat, performance.now() - t0, errors);
}

// ------------------------------------------------------------------------------------------

async function loadScenarios() {
  const results = [];
  const srv = await startServer();
  const sessions = [];
  try {
    for (const c of opts.concurrency) {
      while (sessions.length < c) sessions.push(await openSession(srv, sessions.length));
      const active = sessions.slice(0, c);
      log(`${c} session(s): creating computers and warming up`);
      await Promise.all(active.map(async (s) => { for (let i = 0; i < opts.warmup; i++) await callOnce(s); }));
      const total = Math.max(opts.minCalls, c * opts.callsPerSession);
      log(`${c} session(s): ${total} calls over HTTP`);
      const ours = await drive(srv, active, total, callOnce);
      ours.rssKb = rssKb(srv.proc.pid);
      log(`${c} session(s): ${total} × docker exec over the same ${c} container(s)`);
      const dockerArgs = (s) => ['exec', `kilntainer-${s.computerId}`, ...opts.command.split(' ')];
      for (const s of active.slice(0, Math.min(c, 4))) {
        const r = await runOnce(opts.docker, dockerArgs(s));
        if (r.code !== 0) { failures++; log(`docker exec failed: ${r.err.trim()}`); }
      }
      const base = await drive(srv, active, total, async (s) => {
        const t = performance.now();
        const r = await runOnce(opts.docker, dockerArgs(s));
        if (r.code !== 0) log(`docker exec failed: ${r.err.trim()}`);
        return { ms: performance.now() - t, ok: r.code === 0 };
      });
      results.push({ sessions: c, ours, docker: base });
    }
  } finally {
    await Promise.all(sessions.map((s) => s.client.close().catch(() => {})));
    await srv.stop();
    await cleanup();
  }
  return results;
}

async function idleScenario() {
  const n = opts.idleSessions;
  const srv = await startServer();
  try {
    const init = (i) => post(srv.port, {
      jsonrpc: '2.0', id: i, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'msc-http-bench-idle', version: '0.1.0' } },
    });
    const open = async (i) => {
      const r = await init(i);
      const sid = r.headers['mcp-session-id'];
      if (r.status !== 200 || !sid) throw new Error(`initialize ${i}: ${r.status} ${r.text.slice(0, 200)}`);
      const n2 = await post(srv.port, { jsonrpc: '2.0', method: 'notifications/initialized' },
        { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' });
      if (n2.status !== 202) throw new Error(`initialized ${i}: ${n2.status}`);
      return sid;
    };
    await open(0);
    await sleep(300);
    const before = rssKb(srv.proc.pid);
    log(`idle: opening ${n} sessions`);
    const t0 = performance.now();
    let next = 1;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next <= n) await open(next++);
    }));
    const openMs = performance.now() - t0;
    await sleep(500);
    const after = rssKb(srv.proc.pid);
    const threads = Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${srv.proc.pid}/status`, 'utf8'))?.[1]);
    return { sessions: n, rssBeforeKb: before, rssAfterKb: after, perSessionBytes: ((after - before) * 1024) / n, openMs, threads };
  } finally {
    await srv.stop();
    await cleanup();
  }
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

let load;
let idle;
try {
  load = await loadScenarios();
  idle = await idleScenario();
} finally {
  await cleanup();
}

let md = '| what | mode | calls | errors | p50 ms | p95 ms | p99 ms | mean ms | calls/s | p50 ratio ours/docker-exec | calls/s ratio ours/docker-exec |\n';
md += '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
for (const { sessions, ours, docker } of load) {
  const mode = sessions === 1 ? '1 session' : `${sessions} sessions`;
  md += `| terminal_execute \`${opts.command}\` (HTTP, all-in-one) | ${mode} | ${ours.calls} | ${ours.errors} | ${f1(ours.p50)} | ${f1(ours.p95)} | ` +
    `${f1(ours.p99)} | ${f1(ours.mean)} | ${f1(ours.callsPerSec)} | ${f2(ours.p50 / docker.p50)} | ${f2(ours.callsPerSec / docker.callsPerSec)} |\n`;
  md += `| docker exec \`${opts.command}\` | ${sessions === 1 ? 'serial' : `${sessions} concurrent`} | ${docker.calls} | ${docker.errors} | ` +
    `${f1(docker.p50)} | ${f1(docker.p95)} | ${f1(docker.p99)} | ${f1(docker.mean)} | ${f1(docker.callsPerSec)} | 1.00 | 1.00 |\n`;
}
md += '\n| server memory (HTTP, all-in-one) | VmRSS kB |\n| --- | ---: |\n';
md += `| after start and 1 session | ${idle.rssBeforeKb} |\n`;
md += `| with ${idle.sessions} more idle sessions (opened in ${(idle.openMs / 1000).toFixed(1)} s, never closed; ${idle.threads} threads) | ${idle.rssAfterKb} |\n`;
md += `| per idle session | ${(idle.perSessionBytes / 1024).toFixed(2)} |\n`;
for (const { sessions, ours } of load) md += `| after the ${sessions}-session run (${sessions} computer${sessions === 1 ? '' : 's'} in use) | ${ours.rssKb} |\n`;
process.stdout.write(md);
if (opts.json) writeFileSync(opts.json, JSON.stringify({ command: opts.command, load, idle }, null, 2) + '\n');
const failed = load.reduce((a, r) => a + r.ours.errors + r.docker.errors, 0);
if (failures || failed) log(`${failures} failure(s) through the server, ${failed} in the timed windows (docker exec's included)`);
process.exit(failures || failed ? 1 : 0);
