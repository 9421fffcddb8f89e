#!/usr/bin/env node
// bench.mjs: terminal_execute latency and throughput through the stdio edge on the Docker
// backend, next to a bare `docker exec <same container> true` measured in the same run.
//
//   node bench/bench.mjs [--bin PATH] [--label aio] [--serial 200] [--concurrent 400]
//                        [--sessions 8] [--warmup 20] [--command true] [--json out.json]
//
// Scenarios (each call is one tools/call terminal_execute {command, computer_id}):
//   serial      1 server process, 1 computer, N calls one after another
//   concurrent  S server processes (one session and one computer each), M calls in total,
//               each session making its calls one after another, all sessions at once
//   docker exec serial: N × `docker exec <container of the serial computer> <command>`
//               concurrent: M × `docker exec` over the S containers, S at a time
// Session setup, computer creation and warm-up are outside the timed windows. Prints a markdown
// table on stdout (and JSON with --json). Containers are removed at the end. Exits 1 when any
// call failed (an error, isError, a non-zero exit code, the server gone, a 60 s timeout), the
// warm-up's included, or a session could not be opened.

import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'integration', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!existsSync(SDK)) {
  process.stderr.write(`bench: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'integration')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')).href);

function parseArgs(argv) {
  const o = {
    bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'),
    label: 'all-in-one', serial: 200, concurrent: 400, sessions: 8, warmup: 20, command: 'true',
    flags: [], json: null, docker: process.env.MSC_DOCKER || 'docker',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    switch (a) {
      case '--bin': o.bin = v(); break;
      case '--label': o.label = v(); break;
      case '--serial': o.serial = Number(v()); break;
      case '--concurrent': o.concurrent = Number(v()); break;
      case '--sessions': o.sessions = Number(v()); break;
      case '--warmup': o.warmup = Number(v()); break;
      case '--command': o.command = v(); break;
      case '--flag': o.flags.push(v()); break;
      case '--json': o.json = v(); break;
      case '-h': case '--help':
        process.stdout.write('usage: node bench/bench.mjs [--bin PATH] [--label L] [--serial N] [--concurrent M] ' +
          '[--sessions S] [--warmup W] [--command CMD] [--flag SERVER_FLAG]... [--json FILE]\n');
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default: process.stderr.write(`bench: unknown argument ${a}\n`); process.exit(2);
    }
  }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
if (!existsSync(opts.bin)) {
  process.stderr.write(`bench: binary not found: ${opts.bin}\n`);
  process.exit(1);
}
const RUN = `bench${randomBytes(3).toString('hex')}`;
const log = (m) => process.stderr.write(`bench: ${m}\n`);

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
    const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    c.on('close', (code) => resolve({ code, err }));
    c.on('error', (e) => resolve({ code: -1, err: String(e) }));
  });
}

async function openSession(i) {
  const transport = new StdioClientTransport({
    command: opts.bin, args: opts.flags, env: { ...process.env }, stderr: 'ignore',
  });
  const client = new Client({ name: 'msc-bench', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  const computerId = `${RUN}-s${i}`;
  return { client, transport, computerId };
}

// Every failed call, the warm-up's included: any makes the exit status 1.
let failedCalls = 0;

async function callOnce(s) {
  const t = performance.now();
  let ok = false;
  try {
    const r = await s.client.callTool({ name: 'terminal_execute', arguments: { command: opts.command, computer_id: s.computerId } },
      undefined, { timeout: 60000 });
    ok = !r.isError && r.structuredContent?.exit_code === 0;
    if (!ok) log(`call failed: ${JSON.stringify(r).slice(0, 300)}`);
  } catch (e) {
    log(`call failed: ${e.message}`);
  }
  if (!ok) failedCalls++;
  return { ms: performance.now() - t, ok };
}

async function closeSession(s) {
  await s.client.close().catch(() => {});
}

async function cleanup() {
  const r = await new Promise((resolve) => {
    const c = spawn(opts.docker, ['ps', '-aq', '--filter', 'label=kilntainers.computer-id'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('close', () => resolve(out.split('\n').filter(Boolean)));
  });
  if (!r.length) return;
  const names = await new Promise((resolve) => {
    const c = spawn(opts.docker, ['inspect', '--format', '{{.Name}} {{index .Config.Labels "kilntainers.computer-id"}}', ...r], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    c.stdout.on('data', (d) => { out += d; });
    c.on('close', () => resolve(out.split('\n').filter((l) => l.split(' ')[1]?.startsWith(RUN)).map((l) => l.split(' ')[0].replace(/^\//, ''))));
  });
  if (names.length) await runOnce(opts.docker, ['rm', '-f', ...names]);
}

async function main() {
  const results = {};
  const dockerExecArgs = (ctr) => ['exec', ctr, ...opts.command.split(' ')];
  try {
    // ---- serial through the server
    log(`serial: 1 session, ${opts.serial} calls (${opts.label})`);
    const s0 = await openSession(0);
    for (let i = 0; i < opts.warmup; i++) await callOnce(s0);
    let lat = [];
    let errors = 0;
    let t0 = performance.now();
    for (let i = 0; i < opts.serial; i++) {
      const r = await callOnce(s0);
      lat.push(r.ms);
      if (!r.ok) errors++;
    }
    results.serial = stats(lat, performance.now() - t0, errors);

    // ---- serial bare docker exec on the same container
    const ctr0 = `kilntainer-${s0.computerId}`;
    log(`docker exec serial: ${opts.serial} × docker exec ${ctr0} ${opts.command}`);
    for (let i = 0; i < Math.min(opts.warmup, 10); i++) {
      const r = await runOnce(opts.docker, dockerExecArgs(ctr0));
      if (r.code !== 0) { failedCalls++; log(`docker exec failed: ${r.err.trim()}`); }
    }
    lat = [];
    errors = 0;
    t0 = performance.now();
    for (let i = 0; i < opts.serial; i++) {
      const t = performance.now();
      const r = await runOnce(opts.docker, dockerExecArgs(ctr0));
      lat.push(performance.now() - t);
      if (r.code !== 0) { errors++; log(`docker exec failed: ${r.err.trim()}`); }
    }
    results.dockerSerial = stats(lat, performance.now() - t0, errors);

    // ---- concurrent: S sessions (own server process + own computer each)
    log(`concurrent: ${opts.sessions} sessions, ${opts.concurrent} calls in total`);
    const sessions = [s0];
    for (let i = 1; i < opts.sessions; i++) sessions.push(await openSession(i));
    await Promise.all(sessions.map(async (s) => { for (let i = 0; i < Math.min(opts.warmup, 5); i++) await callOnce(s); }));
    lat = [];
    errors = 0;
    let next = 0;
    t0 = performance.now();
    await Promise.all(sessions.map(async (s) => {
      while (next < opts.concurrent) {
        next++;
        const r = await callOnce(s);
        lat.push(r.ms);
        if (!r.ok) errors++;
      }
    }));
    results.concurrent = stats(lat, performance.now() - t0, errors);

    // ---- concurrent bare docker exec over the same containers
    log(`docker exec concurrent: ${opts.concurrent} × docker exec over ${sessions.length} containers`);
    lat = [];
    errors = 0;
    next = 0;
    t0 = performance.now();
    await Promise.all(sessions.map(async (s) => {
      while (next < opts.concurrent) {
        next++;
        const t = performance.now();
        const r = await runOnce(opts.docker, dockerExecArgs(`kilntainer-${s.computerId}`));
        lat.push(performance.now() - t);
        if (r.code !== 0) errors++;
      }
    }));
    results.dockerConcurrent = stats(lat, performance.now() - t0, errors);

    await Promise.all(sessions.map(closeSession));
  } finally {
    await cleanup();
  }
  return results;
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

const results = await main();
const rows = [
  [`terminal_execute \`${opts.command}\` (${opts.label})`, 'serial, 1 session', results.serial, results.dockerSerial],
  [`docker exec \`${opts.command}\``, 'serial', results.dockerSerial, results.dockerSerial],
  [`terminal_execute \`${opts.command}\` (${opts.label})`, `${opts.sessions} sessions`, results.concurrent, results.dockerConcurrent],
  [`docker exec \`${opts.command}\``, `${opts.sessions} concurrent`, results.dockerConcurrent, results.dockerConcurrent],
];
let md = '| what | mode | calls | errors | p50 ms | p95 ms | p99 ms | mean ms | calls/s | p50 ratio ours/docker-exec | calls/s ratio ours/docker-exec |\n';
md += '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n';
for (const [what, mode, r, base] of rows) {
  const ours = r !== base;
  md += `| ${what} | ${mode} | ${r.calls} | ${r.errors} | ${f1(r.p50)} | ${f1(r.p95)} | ${f1(r.p99)} | ${f1(r.mean)} | ${f1(r.callsPerSec)} | ` +
    `${ours ? f2(r.p50 / base.p50) : '1.00'} | ${ours ? f2(r.callsPerSec / base.callsPerSec) : '1.00'} |\n`;
}
process.stdout.write(md);
if (opts.json) writeFileSync(opts.json, JSON.stringify({ label: opts.label, command: opts.command, results }, null, 2) + '\n');
const failed = Object.values(results).reduce((a, r) => a + r.errors, 0);
if (failed || failedCalls) log(`${failedCalls} call(s) through the server failed, ${failed} in the timed windows`);
process.exit(failed || failedCalls ? 1 : 0);
