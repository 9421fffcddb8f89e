#!/usr/bin/env node
// wasm-bench.mjs: serial terminal_execute on the go_busybox backend next to the same calls on
// the Docker backend, in the same run, through the stdio edge with the official MCP client.
//
//   node bench/wasm-bench.mjs [--bin PATH] [--calls 200] [--warmup 20] [--tree-mb 10] [--no-docker]
//                             [--max-first-ms 10] [--no-max-first]
//
// Workloads (one tools/call each, one computer per backend, calls one after another):
//   echo   args ["echo","hi"]                  (docker: command "echo hi")
//   grep   args ["grep","-r","needle","tree"]  over a generated tree of --tree-mb MB
//          (the same files in both computers: written into the go_busybox computer's folder and
//          `docker cp`'d into the container)
//   first  `echo hi` naming a new computer_id each time: the computer's creation and its first
//          command in one call (go_busybox only; each computer deleted, untimed, after its call)
// Session setup, computer creation, the tree and warm-up are outside the timed windows. Prints a
// markdown table on stdout; the computers are removed at the end. With --max-first-ms MS (the
// issue's target for go_busybox: 10) it exits 1 when the first command's p50 is above MS;
// --no-max-first drops the target again (bench/wasm-run.sh passes 10 first). It exits 1 when a
// call fails (an error, isError, a non-zero exit code, the server gone, a timeout).

import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'integration', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')).href);

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), calls: 200, warmup: 20, treeMb: 10, docker: true, maxFirstMs: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--calls') o.calls = Number(process.argv[++i]);
  else if (a === '--warmup') o.warmup = Number(process.argv[++i]);
  else if (a === '--tree-mb') o.treeMb = Number(process.argv[++i]);
  else if (a === '--no-docker') o.docker = false;
  else if (a === '--max-first-ms') o.maxFirstMs = Number(process.argv[++i]);
  else if (a === '--no-max-first') o.maxFirstMs = null;
  else { process.stderr.write(`wasm-bench: unknown argument ${a}\n`); process.exit(2); }
}
const RUN = `wbench${randomBytes(3).toString('hex')}`;
const log = (m) => process.stderr.write(`wasm-bench: ${m}\n`);
const state = fs.mkdtempSync(path.join(os.tmpdir(), 'msc-wasm-bench-'));

function pct(s, p) { return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]; }

/** A tree of text files, about mb MB, with "needle" on a few lines. */
function makeTree(dir, mb) {
  let total = 0;
  let n = 0;
  const line = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n';
  while (total < mb * 1024 * 1024) {
    const sub = path.join(dir, `d${n % 20}`);
    fs.mkdirSync(sub, { recursive: true });
    const lines = [];
    for (let i = 0; i < 1500; i++) lines.push(i === 700 && n % 10 === 0 ? 'a needle here\n' : line);
    const text = lines.join('');
    fs.writeFileSync(path.join(sub, `f${n}.txt`), text);
    total += text.length;
    n++;
  }
  return n;
}

async function open(flags) {
  const transport = new StdioClientTransport({ command: o.bin, args: flags, env: { ...process.env, KILNTAINERS_WASM_DIR: state, ENABLE_LIFECYCLE_TOOLS: 'true' }, stderr: 'ignore' });
  const client = new Client({ name: 'msc-wasm-bench', version: '0.1.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30000 });
  return client;
}

async function call(client, args) {
  const t = performance.now();
  const r = await client.callTool({ name: 'terminal_execute', arguments: args }, undefined, { timeout: 120000 });
  const ms = performance.now() - t;
  if (r.isError || r.structuredContent?.exit_code !== 0) throw new Error(`call failed: ${JSON.stringify(r).slice(0, 300)}`);
  return ms;
}

async function series(client, args) {
  for (let i = 0; i < o.warmup; i++) await call(client, args);
  const lat = [];
  const t0 = performance.now();
  for (let i = 0; i < o.calls; i++) lat.push(await call(client, args));
  const el = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p90: pct(lat, 90), p99: pct(lat, 99), cps: o.calls / (el / 1000) };
}

/** The first command of --calls new computers, one after another (each deleted after). */
async function firstCommands(client) {
  const lat = [];
  let el = 0;
  for (let i = 0; i < o.warmup + o.calls; i++) {
    const id = `${RUN}-first-${i}`;
    const t = performance.now();
    const ms = await call(client, { computer_id: id, args: ['echo', 'hi'] });
    if (i >= o.warmup) { lat.push(ms); el += performance.now() - t; }
    const r = await client.callTool({ name: 'computer_delete', arguments: { computer_id: id } }, undefined, { timeout: 60000 });
    if (r.isError) throw new Error(`computer_delete failed: ${JSON.stringify(r).slice(0, 300)}`);
  }
  lat.sort((a, b) => a - b);
  return { p50: pct(lat, 50), p90: pct(lat, 90), p99: pct(lat, 99), cps: o.calls / (el / 1000) };
}

const rows = [];
const clients = [];
try {
  const bb = await open(['--backend', 'go_busybox']);
  clients.push(bb);
  const bid = `${RUN}-bb`;
  await call(bb, { computer_id: bid, args: ['true'] });
  const files = makeTree(path.join(state, 'go_busybox', bid, 'root', 'tree'), o.treeMb);
  log(`tree: ${files} files, ${o.treeMb} MB`);
  rows.push(['go_busybox', 'echo hi', await series(bb, { computer_id: bid, args: ['echo', 'hi'] })]);
  rows.push(['go_busybox', `grep -r over ${o.treeMb} MB`, await series(bb, { computer_id: bid, args: ['grep', '-r', '-c', 'needle', 'tree'] })]);
  rows.push(['go_busybox', 'first echo hi on a new computer', await firstCommands(bb)]);
  if (o.docker) {
    const dk = await open([]);
    clients.push(dk);
    const did = `${RUN}-dk`;
    await call(dk, { computer_id: did, command: 'true' });
    const cp = spawnSync('docker', ['cp', path.join(state, 'go_busybox', bid, 'root', 'tree'), `kilntainer-${did}:/tree`]);
    if (cp.status !== 0) throw new Error(`docker cp: ${cp.stderr}`);
    rows.push(['docker', 'echo hi', await series(dk, { computer_id: did, command: 'echo hi' })]);
    rows.push(['docker', `grep -r over ${o.treeMb} MB`, await series(dk, { computer_id: did, command: 'grep -r -c needle /tree' })]);
  }
} finally {
  for (const c of clients) await c.close().catch(() => {});
  spawnSync('docker', ['rm', '-f', `kilntainer-${RUN}-dk`], { stdio: 'ignore' });
  fs.rmSync(state, { recursive: true, force: true });
}

const base = Object.fromEntries(rows.filter((r) => r[0] === 'docker').map((r) => [r[1], r[2]]));
let md = `| backend | workload | calls | p50 ms | p90 ms | p99 ms | calls/s | p50 vs docker |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n`;
for (const [b, w, s] of rows) {
  const ratio = base[w] ? `${(s.p50 / base[w].p50).toFixed(3)}×` : '';
  md += `| ${b} | ${w} | ${o.calls} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.cps.toFixed(0)} | ${ratio} |\n`;
}
process.stdout.write(md);
const first = rows.find((r) => r[1] === 'first echo hi on a new computer');
if (o.maxFirstMs !== null && first && !(first[2].p50 < o.maxFirstMs)) {
  process.stderr.write(`wasm-bench: a new go_busybox computer's first command took p50 ${first[2].p50.toFixed(2)} ms, `
    + `not under ${o.maxFirstMs} ms\n`);
  process.exit(1);
}
