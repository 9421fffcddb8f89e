#!/usr/bin/env node
// first-command.mjs: how long a new computer takes to answer its first command (issue 18).
// One all-in-one server over Streamable HTTP on the Docker backend per scenario; each new
// HTTP session (initialize) calls terminal_execute `echo hi` without a computer_id (a new
// temporary computer) and the client times that first call; the session is then closed
// (DELETE, which removes its computer) before the next one starts.
//
//   node bench/first-command.mjs [--bin PATH] [--sessions 50] [--burst 20] [--pool 2] [--pool-max 32]
//                                [--engine docker|podman] [--docker-host URL] [--docker docker]
//                                [--json out.json]
//
// Scenarios, in one run: `pool` (--warm-pool N, after the pool is full), `cold`
// (--warm-pool 0), each with --sessions one after another and then --burst at once (the pool
// scenario a second burst too, once the pool has grown after the first: --warm-pool-max); and
// `docker run`: the same number of bare `docker run --rm --network none IMAGE echo hi`, one
// after another, each right after one of the cold sessions (the baseline the ratios are taken
// against, under the same load as the cold path). Prints markdown tables.
// Containers are removed at the end (every one carries this run's label).
// FC_LOG=FILE appends the servers' stderr to FILE (the pool's growth, errors).
// Exits 1 when a first command or a bare `docker run` failed, a server exited before it was
// stopped or with a status other than 0 after SIGTERM, or a container was left once the servers stopped (the failed column and the last line
// say how many; a small run is a test: tests/bench/meson.build).

import path from 'node:path';
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'http', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!existsSync(SDK)) {
  process.stderr.write(`first-command: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'http')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'streamableHttp.js')).href);

const opts = {
  bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), sessions: 50, burst: 20, pool: 2, poolMax: 32,
  engine: 'docker', dockerHost: null, docker: 'docker', image: 'debian:bookworm-slim', json: null,
};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const v = () => process.argv[++i];
  if (a === '--bin') opts.bin = v();
  else if (a === '--sessions') opts.sessions = Number(v());
  else if (a === '--burst') opts.burst = Number(v());
  else if (a === '--pool') opts.pool = Number(v());
  else if (a === '--pool-max') opts.poolMax = Number(v());
  else if (a === '--engine') opts.engine = v();
  else if (a === '--docker-host') opts.dockerHost = v();
  else if (a === '--docker') opts.docker = v();
  else if (a === '--json') opts.json = v();
  else { process.stderr.write(`first-command: unknown option ${a}\n`); process.exit(2); }
}
const RUN = `fc${randomBytes(3).toString('hex')}`;
const LABEL = `msc-bench-run=${RUN}`;
const log = (m) => process.stderr.write(`first-command: ${m}\n`);
const dockerEnv = opts.dockerHost ? { ...process.env, DOCKER_HOST: opts.dockerHost } : process.env;

function pct(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
function stats(lat) {
  const s = [...lat].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50), p95: pct(s, 95), max: s[s.length - 1] };
}
function runOnce(cmd, args) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: dockerEnv });
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

let serversGone = 0;

async function startServer(pool, driverId) {
  const port = await freePort();
  const env = { ...process.env };
  delete env.KILNTAINERS_AUTH_TOKEN;
  const args = ['--transport', 'http', '--host', '127.0.0.1', '--port', String(port), '--engine', opts.engine,
    '--driver-id', driverId, '--warm-pool', String(pool), '--warm-pool-max', String(opts.poolMax), '--no-network', `--docker-run-flag=--label=${LABEL}`];
  if (opts.dockerHost) args.push('--docker-host', opts.dockerHost);
  const proc = spawn(opts.bin, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  let srv = null;
  proc.stderr.on('data', (d) => {
    if (process.env.FC_LOG) appendFileSync(process.env.FC_LOG, d);
    stderr = (stderr + d).slice(-8000);
    // "warm pool: N of N ready": counted as they come (the tail is cut).
    if (srv) srv.fulls += String(d).split(`warm pool: ${pool} of ${pool} ready`).length - 1;
  });
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
  srv = {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    fulls: 0,
    stderr: () => stderr,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        serversGone++;
        log(`the server exited before it was stopped (${proc.exitCode ?? proc.signalCode}); its stderr ends with:\n${stderr}`);
      } else {
        proc.kill('SIGTERM');
        const r = await Promise.race([exited, sleep(30000, null, { ref: false })]);
        if (!r) { proc.kill('SIGKILL'); await exited; }
        // It exits 0 on SIGTERM: anything else is a crash or, under ASan, a leak.
        if (r && r.code !== 0) {
          serversGone++;
          log(`the server exited ${r.code ?? r.signal} after SIGTERM; its stderr ends with:\n${stderr}`);
        }
      }
    },
  };
  return srv;
}

/** Pool containers of this driver waiting (named kilntainers-pool-*). */
async function waiting(driverId) {
  const r = await runOnce(opts.docker, ['ps', '-q', '--filter', `label=kilntainers.pool=${driverId}`,
    '--filter', 'name=kilntainers-pool-']);
  return r.out.split('\n').filter(Boolean).length;
}

/** Waits until the server has said its pool is full more than k times. */
async function waitFull(srv, k) {
  const deadline = Date.now() + 60000;
  while (srv.fulls <= k) {
    if (Date.now() > deadline) throw new Error('pool not full after 60 s');
    await sleep(50);
  }
}

/** One new session's first command: ms, or null on failure. */
async function firstCommand(url) {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name: 'msc-first-command', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  const t = performance.now();
  let ms = null;
  try {
    const r = await client.callTool({ name: 'terminal_execute', arguments: { command: 'echo hi' } }, undefined,
      { timeout: 120000 });
    if (!r.isError && r.structuredContent?.stdout === 'hi\n') ms = performance.now() - t;
    else log(`call failed: ${JSON.stringify(r).slice(0, 300)}`);
  } catch (e) {
    log(`call failed: ${e.message}`);
  }
  try { await transport.terminateSession(); } catch { /* the server may have closed it */ }
  await client.close();
  return ms;
}

/** One bare `docker run`: ms, or null on failure. */
async function bareDockerRun() {
  const t = performance.now();
  const r = await runOnce(opts.docker, ['run', '--rm', '--network', 'none', '--label', LABEL, opts.image, 'echo', 'hi']);
  return r.code === 0 && r.out === 'hi\n' ? performance.now() - t : null;
}

/**
 * With `baseline` (an array), each session one after another is followed by a bare `docker run`
 * whose time goes there: the cold path and its baseline under the same load.
 */
async function scenario(name, pool, baseline = null) {
  const driverId = `${RUN}-${name}`;
  const srv = await startServer(pool, driverId);
  const out = {};
  try {
    if (pool > 0) await waitFull(srv, 0);
    const seq = [];
    let failed = 0;
    for (let i = 0; i < opts.sessions; i++) {
      const ms = await firstCommand(srv.url);
      if (ms === null) failed++; else seq.push(ms);
      if (baseline) baseline.push(await bareDockerRun());
    }
    out.sequential = { ...stats(seq), failed };
    // Full again: as many waiting as the pool holds, and the last one's check done.
    if (pool > 0) {
      const deadline = Date.now() + 60000;
      while ((await waiting(driverId)) < pool && Date.now() < deadline) await sleep(100);
    }
    await sleep(1500);
    const burstOnce = async () => {
      const b = await Promise.all(Array.from({ length: opts.burst }, () => firstCommand(srv.url)));
      return { ...stats(b.filter((x) => x !== null)), failed: b.filter((x) => x === null).length };
    };
    out.burst = await burstOnce();
    if (pool > 0) {
      // The pool grew by the first burst's misses: the next burst of that size finds it ready.
      const want = Math.min(opts.burst, Math.max(pool, opts.poolMax));
      const deadline = Date.now() + 120000;
      while ((await waiting(driverId)) < want && Date.now() < deadline) await sleep(200);
      out.grownTo = await waiting(driverId);
      await sleep(1500);
      out.burst2 = await burstOnce();
    }
  } finally {
    await srv.stop();
  }
  return out;
}

async function cleanup() {
  const r = await runOnce(opts.docker, ['ps', '-aq', '--filter', `label=${LABEL}`]);
  const ids = r.out.split('\n').filter(Boolean);
  if (ids.length) await runOnce(opts.docker, ['rm', '-f', ...ids]);
  return ids.length;
}

const results = {};
try {
  results.pool = await scenario('pool', opts.pool);
  const bare = [];
  results.cold = await scenario('cold', 0, bare);
  results.dockerRun = { ...stats(bare.filter((x) => x !== null)), failed: bare.filter((x) => x === null).length };
} finally {
  const left = await cleanup();
  if (left) log(`removed ${left} container(s) left behind`);
  results.leftBehind = left;
}
const base = results.dockerRun.p50;
const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const row = (what, mode, s) => `| ${what} | ${mode} | ${s.n} | ${s.failed} | ${f(s.p50)} | ${f(s.p95)} | ${f(s.max)} | ${(s.p50 / base).toFixed(2)} |`;
const lines = [
  `| what | mode | sessions | failed | p50 ms | p95 ms | max ms | p50 ratio to bare docker run |`,
  '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  row(`first \`echo hi\`, --warm-pool ${opts.pool}`, `${opts.sessions} one after another`, results.pool.sequential),
  row(`first \`echo hi\`, --warm-pool ${opts.pool}`, `burst of ${opts.burst}`, results.pool.burst),
  ...(results.pool.burst2 ? [row(`first \`echo hi\`, --warm-pool ${opts.pool}`, `the next burst of ${opts.burst} (pool grown to ${results.pool.grownTo})`, results.pool.burst2)] : []),
  row('first `echo hi`, --warm-pool 0 (cold path)', `${opts.sessions} one after another`, results.cold.sequential),
  row('first `echo hi`, --warm-pool 0 (cold path)', `burst of ${opts.burst}`, results.cold.burst),
  row('bare `docker run --rm --network none IMAGE echo hi`', `${opts.sessions} one after another`, results.dockerRun),
];
process.stdout.write(`${lines.join('\n')}\n\ncontainers left behind: ${results.leftBehind}\n`);
if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 2));
const failed = [results.pool.sequential, results.pool.burst, results.pool.burst2, results.cold.sequential,
  results.cold.burst, results.dockerRun].reduce((a, r) => a + (r?.failed ?? 0), 0);
if (failed || serversGone || results.leftBehind) {
  log(`${failed} first command(s) or docker run(s) failed; ${serversGone} server(s) exited before they were stopped; `
    + `${results.leftBehind} container(s) left behind by the stopped servers`);
  process.exit(1);
}
