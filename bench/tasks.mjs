#!/usr/bin/env node
// tasks.mjs: the cost of MCP tasks (issue 16) through the stdio edge on the Docker backend, in
// one server and one computer, raw JSON-RPC at 2026-07-28 (the SDK v2 client has no tasks
// client). Two comparisons, interleaved call by call:
//   short   `true` called declaring the tasks extension (it ends before the 2 s wait: the
//           immediate result, with the hidden task record, the request copy and the timer)
//           against the same call without the extension
//   task    `sleep 2.5` through a task (tools/call answers at 2 s with the task, then
//           tasks/get every 100 ms until completed) against the plain call
//
//   node bench/tasks.mjs [--bin PATH] [--runs 200] [--task-runs 5]
//
// Prints a markdown table: p50/mean wall time per call each way and the ratio task/plain.
// Exits 1 when a call fails (a JSON-RPC error, isError, a non-zero exit code, no answer within
// 120 s, the server gone).

import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import os from 'node:os';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), runs: 200, taskRuns: 5 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--runs') o.runs = Number(process.argv[++i]);
  else if (a === '--task-runs') o.taskRuns = Number(process.argv[++i]);
  else { process.stderr.write(`tasks.mjs: unknown argument ${a}\n`); process.exit(2); }
}

const EXT = 'io.modelcontextprotocol/tasks';
const meta = (tasks) => ({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [EXT]: {} } } : {} });
const computer = `bench-tasks-${randomBytes(3).toString('hex')}`;
const proc = spawn(o.bin, ['--no-network', '--timeout', '60'], { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map();
const CALL_MS = 120000;
let gone = null;
const exited = new Promise((res) => proc.on('exit', (code, signal) => {
  gone = `the server exited (${code ?? signal})`;
  for (const w of waiting.values()) w(null);
  waiting.clear();
  res();
}));
proc.on('error', (e) => {   // not started (no such file, say)
  gone = `the server did not start (${e.message})`;
  for (const w of waiting.values()) w(null);
  waiting.clear();
});
proc.stdin.on('error', () => {});   // EPIPE once the server is gone: its calls fail above
let buf = '';
proc.stdout.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id !== undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); }
  }
});
let next = 1;
// Resolves the JSON-RPC reply; rejects when the server is gone or does not answer in time.
const rpc = (method, params, tasks) => new Promise((resolve, reject) => {
  if (gone) { reject(new Error(`${method}: ${gone}`)); return; }
  const id = next++;
  const timer = setTimeout(() => { waiting.delete(id); reject(new Error(`${method}: no answer in ${CALL_MS / 1000} s`)); }, CALL_MS);
  waiting.set(id, (m) => {
    clearTimeout(timer);
    if (m === null) reject(new Error(`${method}: ${gone}`));
    else resolve(m);
  });
  proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta(tasks) } }) + '\n');
});
const ok = (r) => (r.result?.structuredContent ?? r.result?.result?.structuredContent)?.exit_code === 0 &&
  !(r.result?.isError ?? r.result?.result?.isError);
const call = (command, tasks) => rpc('tools/call', { name: 'terminal_execute', arguments: { command, computer_id: computer } }, tasks);

async function throughTask(command) {
  const r = await call(command, true);
  if (r.result?.resultType !== 'task') return r;
  for (;;) {
    await new Promise((res) => setTimeout(res, 100));
    const g = await rpc('tasks/get', { taskId: r.result.taskId }, true);
    if (g.result?.status !== 'working') return g;
  }
}

async function timed(fn) { const t0 = performance.now(); const r = await fn(); return [performance.now() - t0, r]; }
const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

const rows = [];
let errors = 0;
try {
  if (!ok(await call('true', false))) throw new Error('the first call failed'); // the computer, made once
  for (let i = 0; i < 10; i++) if (!ok(await call('true', i % 2 === 0))) errors++; // warm-up
  for (const [label, command, runs, viaTask] of [
    ['`true` (immediate result)', 'true', o.runs, (c) => call(c, true)],
    ['`sleep 2.5` (a task, tasks/get every 100 ms)', 'sleep 2.5', o.taskRuns, throughTask]]) {
    const plain = [];
    const task = [];
    let failed = 0;
    for (let i = 0; i < runs; i++) {
      const [a, ra] = await timed(() => viaTask(command));
      const [b, rb] = await timed(() => call(command, false));
      if (!ok(ra) || !ok(rb)) {
        failed++;
        process.stderr.write(`tasks.mjs: call failed: ${JSON.stringify(ok(ra) ? rb : ra).slice(0, 300)}\n`);
      }
      task.push(a);
      plain.push(b);
    }
    errors += failed;
    rows.push(`| ${label} | ${runs} | ${failed} | ${p50(plain).toFixed(1)} | ${p50(task).toFixed(1)} | ${mean(plain).toFixed(1)} | ${mean(task).toFixed(1)} | ${(p50(task) / p50(plain)).toFixed(2)} | ${(mean(task) / mean(plain)).toFixed(2)} |`);
  }
} catch (e) {
  process.stderr.write(`tasks.mjs: ${e.message}\n`);
  errors++;
} finally {
  proc.stdin.end();
  if (!gone) {
    const t = setTimeout(() => proc.kill('SIGKILL'), 30000);
    await exited;
    clearTimeout(t);
  }
  await new Promise((res) => spawn('docker', ['rm', '-f', `kilntainer-${computer}`], { stdio: 'ignore' }).on('close', res));
}
console.log(`load average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
console.log('| command | runs | errors | p50 ms plain | p50 ms with tasks | mean ms plain | mean ms with tasks | p50 ratio tasks/plain | mean ratio tasks/plain |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) console.log(r);
if (errors) {
  process.stderr.write(`tasks.mjs: ${errors} call(s) failed\n`);
  process.exit(1);
}
