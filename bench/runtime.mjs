#!/usr/bin/env node
// runtime.mjs: what gVisor costs (issue 32). In one run, under the engine's default runtime
// (runc) and under --runtime RT (default runsc), one after another per measure:
//   exec p50   terminal_execute `true` on one computer (stdio all-in-one server, warm-up excluded)
//   api        exec p50 again under runc with MSC_FAST_EXEC=0 (the Engine API exec gVisor gets)
//   forks      one command running /bin/true 100 times (its exec_duration_ms: the kernel's cost)
//   first      the first command of a new temporary computer taken from a warm pool of 1
//   docker run bare `docker run --rm [--runtime RT] --network none IMAGE true`
// Prints a markdown table with the ratios RT/runc.
//
//   node bench/runtime.mjs [--bin PATH] [--runtime runsc] [--calls 40] [--firsts 3] [--runs 5]
//
// Needs the MCP SDK of tests/integration (npm ci --prefix tests/integration). Exits 1 when a
// call failed. Containers are removed at the end (each server's own, by their computer ids).

import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'integration', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!existsSync(SDK)) {
  process.stderr.write(`runtime: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'integration')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')));
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')));

const opt = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const BIN = opt('bin', path.join(REPO, 'build', 'mcp-sandbox-computer'));
const RT = opt('runtime', 'runsc');
const CALLS = Number(opt('calls', 40));
const FIRSTS = Number(opt('firsts', 3));
const RUNS = Number(opt('runs', 5));
const IMAGE = 'debian:bookworm-slim';
const RUN = randomBytes(3).toString('hex');
let failures = 0;
const made = [];
const forkMs = {};       // exec_duration_ms of 100 fork+exec in one command, per runtime

const p50 = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };

function run(cmd, args) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    c.on('close', (code) => resolve({ code, err }));
  });
}

async function server(flags, env = {}) {
  const t = new StdioClientTransport({ command: BIN, args: flags, stderr: 'pipe', env: { ...process.env, ...env } });
  let log = '';
  t.stderr.on('data', (c) => { log += c; });
  const client = new Client({ name: 'bench-runtime', version: '1' }, { capabilities: {} });
  await client.connect(t, { timeout: 60000 });
  return { client, log: () => log, close: () => client.close() };
}

async function call(s, args) {
  const t0 = performance.now();
  const r = await s.client.callTool({ name: 'terminal_execute', arguments: args }, undefined, { timeout: 120000 });
  const ms = performance.now() - t0;
  if (r.isError || r.structuredContent?.exit_code !== 0) {
    failures++;
    process.stderr.write(`runtime: call failed: ${JSON.stringify(r.content).slice(0, 300)}\n`);
  }
  return { ms, sc: r.structuredContent };
}

const rtFlags = (rt) => (rt ? ['--runtime', rt] : []);

async function execP50(rt, env = {}) {
  const s = await server(['--warm-pool', '0', ...rtFlags(rt)], env);
  const id = `bench-rt-${RUN}-${rt || 'default'}${env.MSC_FAST_EXEC ? '-api' : ''}`;
  made.push(`kilntainer-${id}`);
  try {
    await call(s, { computer_id: id, temporary: false, command: 'true' });
    for (let i = 0; i < 3; i++) await call(s, { computer_id: id, temporary: false, command: 'true' });
    const ms = [];
    for (let i = 0; i < CALLS; i++) ms.push((await call(s, { computer_id: id, temporary: false, command: 'true' })).ms);
    const forks = [];
    for (let i = 0; i < 3; i++) {
      forks.push((await call(s, { computer_id: id, temporary: false,
        command: 'i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done' })).sc.exec_duration_ms);
    }
    if (!env.MSC_FAST_EXEC) forkMs[rt || 'default'] = p50(forks);
    return p50(ms);
  } finally {
    await s.close();
  }
}

async function firstFromPool(rt) {
  const ms = [];
  for (let i = 0; i < FIRSTS; i++) {
    const s = await server(['--warm-pool', '1', '--warm-pool-max', '1', '--driver-id', `benchrt${RUN}`, ...rtFlags(rt)]);
    try {
      for (let w = 0; w < 1200 && !s.log().includes('warm pool: 1 of 1 ready'); w++) await sleep(50);
      const r = await call(s, { command: 'true' });
      ms.push(r.ms);
    } finally {
      await s.close();
    }
  }
  return p50(ms);
}

async function dockerRun(rt) {
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await run('docker', ['run', '--rm', ...rtFlags(rt), '--network', 'none', IMAGE, 'true']);
    ms.push(performance.now() - t0);
    if (r.code !== 0) { failures++; process.stderr.write(`runtime: docker run: ${r.err}\n`); }
  }
  return p50(ms);
}

const rows = [];
for (const [what, fn] of [['exec p50 (`true`, one computer)', execP50],
  ['first command from the warm pool', firstFromPool], ['bare `docker run --rm --network none`', dockerRun]]) {
  const a = await fn('');
  const b = await fn(RT);
  rows.push(`| ${what} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)} |`);
  if (fn === execP50) {
    // The fallback gVisor needs, on runc: how much of the ratio is the Engine API exec.
    const api = await execP50('', { MSC_FAST_EXEC: '0' });
    rows.push(`| exec p50, runc through the Engine API exec (MSC_FAST_EXEC=0) vs ${RT} | ${api.toFixed(1)} | ${b.toFixed(1)} | ${(b / api).toFixed(2)} |`);
    const [fa, fb] = [forkMs.default, forkMs[RT]];
    rows.push(`| 100 fork+exec of /bin/true in one command (exec_duration_ms) | ${fa.toFixed(1)} | ${fb.toFixed(1)} | ${(fb / fa).toFixed(2)} |`);
  }
}
if (made.length) await run('docker', ['rm', '-f', ...made]);
// Waiting containers a server had no time to remove on its way out (runsc's are slow to go).
await new Promise((resolve) => {
  const c = spawn('docker', ['ps', '-aq', '--filter', `label=kilntainers.pool=benchrt${RUN}`]);
  let ids = '';
  c.stdout.on('data', (d) => { ids += d; });
  c.on('close', async () => {
    const list = ids.split('\n').filter(Boolean);
    if (list.length) await run('docker', ['rm', '-f', ...list]);
    resolve();
  });
});
process.stdout.write(`| what | runc ms | ${RT} ms | ratio ${RT}/runc |\n| --- | ---: | ---: | ---: |\n${rows.join('\n')}\n`);
if (failures) {
  process.stdout.write(`${failures} failed\n`);
  process.exit(1);
}
