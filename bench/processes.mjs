#!/usr/bin/env node
// processes.mjs: background processes (issue 28) against plain commands, in one run, one
// server (stdio, --tools processes), one computer:
//   - process_output of a running process against terminal_execute `cat` of its log file;
//   - terminal_execute background: true (start) against a foreground `true`.
//
//   node bench/processes.mjs [--bin PATH] [--n 100] [--flags "--no-network ..."]
//
// Prints a markdown table (median and p90 in ms, and the ratios). Each pair is timed in turns
// (see timePair). The computer is removed at the end (the server's session ends with it).
import path from 'node:path';
import { existsSync } from 'node:fs';
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

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), n: 100, flags: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--n') o.n = Number(process.argv[++i]);
  else if (a === '--flags') o.flags = process.argv[++i].split(/\s+/).filter(Boolean);
  else { process.stderr.write(`usage: processes.mjs [--bin PATH] [--n N] [--flags "..."]\n`); process.exit(2); }
}

// The whole environment (the SDK passes a few variables only): DOCKER_HOST, MSC_EXEC_HELPER.
const t = new StdioClientTransport({ command: o.bin, args: ['--tools', 'processes', '--max-background-processes', String(o.n + 4), ...o.flags], stderr: 'ignore', env: { ...process.env } });
const c = new Client({ name: 'bench-processes', version: '1' }, { capabilities: {} });
await c.connect(t);
async function call(name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return r.structuredContent;
}
// Two calls timed in turns (a, b, then b, a, ...), so that both see the same load on a
// shared machine; the medians and 90th percentiles of each.
async function timePair(fa, fb) {
  const ta = [], tb = [];
  const one = async (fn, into, i) => { const t0 = performance.now(); await fn(i); into.push(performance.now() - t0); };
  for (let i = 0; i < o.n; i++) {
    if (i % 2 === 0) { await one(fa, ta, i); await one(fb, tb, i); }
    else { await one(fb, tb, i); await one(fa, ta, i); }
  }
  const stats = (ms) => { ms.sort((x, y) => x - y); return { p50: ms[Math.floor(ms.length / 2)], p90: ms[Math.floor(ms.length * 0.9)] }; };
  return [stats(ta), stats(tb)];
}
const f = (x) => x.toFixed(1);

await call('terminal_execute', { command: 'true' });   // the computer, outside the timings
const srv = await call('terminal_execute', { command: 'while true; do echo tick; sleep 0.5; done', background: true });
for (let i = 0; i < 5; i++) {
  await call('process_output', { process_id: srv.process_id });
  await call('terminal_execute', { command: `cat ${srv.log}` });
}
const [out, cat] = await timePair(() => call('process_output', { process_id: srv.process_id }),
  () => call('terminal_execute', { command: `cat ${srv.log}` }));
const [bg, fg] = await timePair(() => call('terminal_execute', { command: 'true', background: true }),
  () => call('terminal_execute', { command: 'true' }));
await call('process_kill', { process_id: srv.process_id, signal: 'KILL' });
await c.close();

console.log(`| ${o.n} calls each | p50 ms | p90 ms | ratio (p50) |`);
console.log('|---|---|---|---|');
console.log(`| process_output | ${f(out.p50)} | ${f(out.p90)} | ${(out.p50 / cat.p50).toFixed(2)} × cat |`);
console.log(`| terminal_execute cat LOG | ${f(cat.p50)} | ${f(cat.p90)} | 1 |`);
console.log(`| terminal_execute background: true (start) | ${f(bg.p50)} | ${f(bg.p90)} | ${(bg.p50 / fg.p50).toFixed(2)} × true |`);
console.log(`| terminal_execute true | ${f(fg.p50)} | ${f(fg.p90)} | 1 |`);
