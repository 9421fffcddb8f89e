#!/usr/bin/env node
// era-bench.mjs: terminal_execute calls/s, p50 and p99 over Streamable HTTP in the MCP 2026-07-28
// era (stateless POSTs with _meta, the Mcp-* headers and a sandbox_handle) against the 2025-11-25
// era (initialize, then Mcp-Session-Id on each POST) in the same run, on the same server process,
// at 1, 8 and 64 concurrent clients (each its own computer: its handle or its session). Raw
// fetch() with keep-alive for both, so the difference is the protocol, not the client library.
//
//   node bench/era-bench.mjs [--bin PATH] [--concurrency 1,8,64] [--calls 400] [--command true]
//
// Prints a markdown table on stdout. Every container made carries the label msc.era-bench=<run>
// and is removed at the end. Exits 1 when a call fails (an HTTP or JSON-RPC error, isError, no
// answer within 120 s) or the server is not up within 20 s, exits before it is stopped or does
// not exit 0 on SIGTERM.
import path from 'node:path';
import net from 'node:net';
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : def; };
const BIN = opt('bin', process.env.MSC_BIN || path.join(HERE, '..', 'build', 'mcp-sandbox-computer'));
const LEVELS = opt('concurrency', '1,8,64').split(',').map(Number);
const CALLS = Number(opt('calls', '400'));
const COMMAND = opt('command', 'true');
const RUN = `eb${randomBytes(3).toString('hex')}`;
const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

const freePort = () => new Promise((res) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const port = await freePort();
const URL_ = `http://127.0.0.1:${port}/mcp`;
const env = { ...process.env };
delete env.KILNTAINERS_AUTH_TOKEN;
const srv = spawn(BIN, ['--transport', 'http', '--port', String(port), '--max-sandboxes', '1000',
  '--max-session-commands', '1024', `--docker-run-flag=--label=msc.era-bench=${RUN}`], { stdio: ['ignore', 'ignore', 'inherit'], env });
const exited = new Promise((res) => srv.once('exit', (code, signal) => res(code ?? signal)));
const gone = () => srv.exitCode !== null || srv.signalCode !== null;
const CALL_MS = 120000;

let rid = 0;
async function post(body, headers) {
  const r = await fetch(URL_, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(CALL_MS), headers: {
    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${body.method}: HTTP ${r.status} ${text.slice(0, 200)}`);
  return { r, json: JSON.parse(text) };
}
const call = (a) => ({ jsonrpc: '2.0', id: ++rid, method: 'tools/call', params: { name: 'terminal_execute', arguments: a } });

/** A 2026 client: its first call mints its handle. */
async function modernClient() {
  const h = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'terminal_execute' };
  const first = call({ command: COMMAND });
  first.params._meta = META;
  const { json } = await post(first, h);
  const handle = json.result?.isError === false ? json.result.structuredContent?.sandbox_handle : undefined;
  if (!handle) throw new Error(`no sandbox_handle: ${JSON.stringify(json).slice(0, 300)}`);
  return async () => {
    const b = call({ command: COMMAND, sandbox_handle: handle });
    b.params._meta = META;
    const { json: j } = await post(b, h);
    if (j.result?.isError !== false) throw new Error(JSON.stringify(j));
  };
}

/** A 2025 client: initialize, then its session's default computer. */
async function legacyClient() {
  const { r } = await post({ jsonrpc: '2.0', id: ++rid, method: 'initialize', params: {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }, {});
  const sid = r.headers.get('mcp-session-id');
  if (!sid) throw new Error('initialize: no Mcp-Session-Id');
  const h = { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' };
  const n = await fetch(URL_, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    signal: AbortSignal.timeout(CALL_MS), headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...h } });
  if (n.status !== 202) throw new Error(`notifications/initialized: HTTP ${n.status}`);
  const once = async () => {
    const { json: j } = await post(call({ command: COMMAND }), h);
    if (j.result?.isError !== false) throw new Error(JSON.stringify(j));
  };
  await once();   // its computer is made here, outside the timed window
  return once;
}

async function measure(make, c) {
  const clients = await Promise.all(Array.from({ length: c }, make));
  for (const f of clients) await f();  // warm-up
  const total = Math.max(CALLS, c * 10);
  const lat = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(clients.map(async (f) => {
    while (next++ < total) {
      const s = performance.now();
      await f();
      lat.push(performance.now() - s);
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
  return { rate: lat.length / secs, p50: q(0.5), p99: q(0.99) };
}

const rows = [];
let failed = false;
try {
  for (let i = 0; ; i++) {
    if (gone()) throw new Error('the server exited at startup');
    try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break; } catch { /* not yet */ }
    if (i >= 200) throw new Error('the server is not up after 20 s');
    await sleep(100);
  }
  for (const c of LEVELS) {
    const legacy = await measure(legacyClient, c);
    const modern = await measure(modernClient, c);
    rows.push({ c, legacy, modern });
  }
} catch (e) {
  process.stderr.write(`era-bench: ${e.message}\n`);
  failed = true;
} finally {
  if (gone()) {
    process.stderr.write(`era-bench: the server exited before it was stopped (${await exited})\n`);
    failed = true;
  } else {
    srv.kill('SIGTERM');
    const status = await exited;   // 0 on SIGTERM: anything else is a crash or, under ASan, a leak
    if (status !== 0) {
      process.stderr.write(`era-bench: the server exited ${status} after SIGTERM\n`);
      failed = true;
    }
  }
  const ids = execFileSync('docker', ['ps', '-aq', '--filter', `label=msc.era-bench=${RUN}`]).toString().trim();
  if (ids) execFileSync('docker', ['rm', '-f', ...ids.split(/\s+/)]);
}
const f = (x) => x.toFixed(x < 10 ? 2 : 0);
console.log('| clients | 2025-11-25 calls/s | p50 ms | p99 ms | 2026-07-28 calls/s | p50 ms | p99 ms | 2026 / 2025 calls/s |');
console.log('|---|---|---|---|---|---|---|---|');
for (const { c, legacy: l, modern: m } of rows) {
  console.log(`| ${c} | ${f(l.rate)} | ${f(l.p50)} | ${f(l.p99)} | ${f(m.rate)} | ${f(m.p50)} | ${f(m.p99)} | ${(m.rate / l.rate).toFixed(2)}x |`);
}
if (failed) process.exit(1);
