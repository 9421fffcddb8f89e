#!/usr/bin/env node
// hops.mjs: where one terminal_execute's time goes, hop by hop (issue 33).
//
//   meson setup build-trace -Dc_args=-DMSC_HOP_TRACE && ninja -C build-trace
//   node bench/hops.mjs [--bin build-trace/mcp-sandbox-computer] [--calls 300] [--command true] [--first 30]
//
// A build with MSC_HOP_TRACE (lib/msc_hop.h) writes one "HOPS name=us ..." line to stderr per
// answered request: the microseconds between consecutive marks (the edge's read or MHD's first
// call, each NNG hop, each pack and unpack, the driver's queue, the helper's connect, request and
// command, the reply). The SDK client calls terminal_execute `command` on one computer over stdio,
// then over Streamable HTTP (one all-in-one server each); the medians of each hop are printed next
// to the client's own p50 and two baselines measured in the same run: fork+exec of /bin/true on the
// host (a loop of 500 in /bin/sh) and a bare `docker exec CONTAINER true` (30, one after another).
// Then --first new HTTP sessions one after another, each calling `echo hi` without a computer_id
// (a new temporary computer taken from the default warm pool of 2, waiting for the pool to be full
// again before each): the take's own steps are marked in the driver (docker_pool.c).
// Exits 1 when a call failed.
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'http', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'streamableHttp.js')).href);

const opts = { bin: path.join(REPO, 'build-trace', 'mcp-sandbox-computer'), calls: 300, command: 'true', first: 30 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') opts.bin = process.argv[++i];
  else if (a === '--calls') opts.calls = Number(process.argv[++i]);
  else if (a === '--command') opts.command = process.argv[++i];
  else if (a === '--first') opts.first = Number(process.argv[++i]);
  else { process.stderr.write(`hops: unknown option ${a}\n`); process.exit(2); }
}
const RUN = `hops${randomBytes(3).toString('hex')}`;
let failed = 0;
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN; };

function hopsOf(text) {
  return text.split('\n').filter((l) => l.startsWith('HOPS ')).map((l) => l.slice(5).trim().split(' ')
    .map((kv) => { const i = kv.lastIndexOf('='); return [kv.slice(0, i), Number(kv.slice(i + 1))]; }));
}

async function timeCalls(client, id) {
  const lat = [];
  for (let i = 0; i < opts.calls + 10; i++) {
    const t = performance.now();
    const r = await client.callTool({ name: 'terminal_execute', arguments: { command: opts.command, computer_id: id } },
      undefined, { timeout: 60000 });
    if (r.isError || r.structuredContent?.exit_code !== 0) failed++;
    if (i >= 10) lat.push(performance.now() - t);
  }
  return lat;
}

async function overStdio() {
  let err = '';
  const transport = new StdioClientTransport({ command: opts.bin, args: ['--no-network', '--warm-pool', '0'], stderr: 'pipe' });
  transport.stderr.on('data', (d) => { err += d; });
  const client = new Client({ name: 'msc-hops', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  const lat = await timeCalls(client, `${RUN}-stdio`);
  const dockerExecMs = bareDockerExec(`kilntainer-${RUN}-stdio`);
  await client.close();
  await sleep(200);
  return { lat, dockerExecMs, hops: hopsOf(err).slice(-opts.calls) };
}

function freePort() {
  return new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
}

async function httpServer(pool) {
  const port = await freePort();
  const srv = { err: '', url: new URL(`http://127.0.0.1:${port}/mcp`) };
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const proc = spawn(opts.bin, ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), '--no-network',
    '--driver-id', `${RUN}-${pool}`, '--warm-pool', String(pool)], { stdio: ['ignore', 'ignore', 'pipe'], env });
  proc.stderr.on('data', (d) => { srv.err += d; });
  srv.stop = async () => { proc.kill('SIGTERM'); await new Promise((resolve) => proc.on('exit', resolve)); };
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise((resolve) => http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false },
      (res) => { res.resume(); resolve(res.statusCode === 200); }).on('error', () => resolve(false)));
    if (ok) break;
    await sleep(100);
  }
  return srv;
}

/** Each a new HTTP session's first command (a new temporary computer) with the default pool. */
async function firstCommands() {
  const srv = await httpServer(2);
  const lat = [];
  const ready = () => srv.err.split('warm pool: 2 of 2 ready').length - 1;
  for (let i = 0; i < opts.first; i++) {
    // Each one finds the pool full: the take, not a refill, is measured.
    const until = Date.now() + 60000;
    while (ready() < i + 1 && Date.now() < until) await sleep(50);
    const transport = new StreamableHTTPClientTransport(srv.url);
    const client = new Client({ name: 'msc-hops', version: '0.1.0' }, { capabilities: {} });
    await client.connect(transport, { timeout: 30000 });
    const t = performance.now();
    const r = await client.callTool({ name: 'terminal_execute', arguments: { command: 'echo hi' } }, undefined, { timeout: 120000 });
    if (r.isError || r.structuredContent?.stdout !== 'hi\n') failed++;
    else lat.push(performance.now() - t);
    try { await transport.terminateSession(); } catch { /* gone */ }
    await client.close();
  }
  await srv.stop();
  return { lat, hops: hopsOf(srv.err).filter((h) => h.some(([k]) => k === 'driver_take_start')) };
}

async function overHttp() {
  const srv = await httpServer(0);
  const transport = new StreamableHTTPClientTransport(srv.url);
  const client = new Client({ name: 'msc-hops', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  const lat = await timeCalls(client, `${RUN}-http`);
  try { await transport.terminateSession(); } catch { /* gone */ }
  await client.close();
  await srv.stop();
  return { lat, hops: hopsOf(srv.err).filter((h) => h.length > 8).slice(-opts.calls) };
}

/** Median of each hop, over the lines whose hop names are the most common sequence. */
function breakdown(hops) {
  const key = (h) => h.map(([k]) => k).join(' ');
  const count = new Map();
  for (const h of hops) count.set(key(h), (count.get(key(h)) || 0) + 1);
  const best = [...count.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const same = hops.filter((h) => key(h) === best);
  const names = same[0].map(([k]) => k);
  return { n: same.length, of: hops.length, rows: names.map((k, i) => [k, med(same.map((h) => h[i][1]))]),
    total: med(same.map((h) => h.reduce((a, [, v]) => a + v, 0))) };
}

function forkExecTrue() {
  const n = 500;
  const t = performance.now();
  spawnSync('/bin/sh', ['-c', `i=0; while [ $i -lt ${n} ]; do /bin/true; i=$((i+1)); done`]);
  return (performance.now() - t) / n;
}

function bareDockerExec(name) {
  const lat = [];
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    const r = spawnSync('docker', ['exec', name, 'true']);
    if (r.status !== 0) failed++;
    lat.push(performance.now() - t);
  }
  return med(lat);
}

const forkMs = forkExecTrue();
const s = await overStdio();
const { dockerExecMs } = s;
const h = await overHttp();
const fc = opts.first > 0 ? await firstCommands() : null;
const forkMs2 = forkExecTrue();
const base = (forkMs + forkMs2) / 2;
const f = (x) => x.toFixed(3);
let md = `baselines: fork+exec /bin/true ${f(base)} ms (before ${f(forkMs)}, after ${f(forkMs2)}); bare docker exec true ${dockerExecMs.toFixed(1)} ms\n\n`;
const scen = [['stdio, `' + opts.command + '` on a running computer', s], ['HTTP, `' + opts.command + '` on a running computer', h]];
if (fc) scen.push(['HTTP, first `echo hi` of a new session (a new temporary computer, the default pool of 2)', fc]);
for (const [name, r] of scen) {
  const b = breakdown(r.hops);
  const p50 = med(r.lat);
  const sorted = [...r.lat].sort((a, b) => a - b);
  const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
  md += `${name}: client p50 ${f(p50)} ms, p95 ${f(p95)} ms (p50 ${f(p50 / base)}x fork+exec, ${(p50 / dockerExecMs).toFixed(3)}x docker exec); server-side median ${f(b.total / 1000)} ms; ${b.n} of ${b.of} traces with the usual order\n\n`;
  md += '| hop | median us | ratio to fork+exec /bin/true |\n| --- | ---: | ---: |\n';
  for (const [k, v] of b.rows) md += `| ${k} | ${v} | ${f(v / 1000 / base)} |\n`;
  md += `| client and its transport (client p50 - server sum) | ${Math.round(p50 * 1000 - b.total)} | ${f((p50 - b.total / 1000) / base)} |\n\n`;
}
process.stdout.write(md);
if (failed) { process.stderr.write(`hops: ${failed} call(s) failed\n`); process.exit(1); }
