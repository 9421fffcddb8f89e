#!/usr/bin/env node
// progress.mjs: the cost of live output (issue 16) on a command printing 10 MB, through the
// stdio edge on the Docker backend: the same command called with a progressToken (the SDK's
// onprogress) and without, interleaved, in one server and one computer. Two commands:
//   burst   10 MB of 100-byte lines at once (the output path's own cost: every frame the
//           driver reads is counted and its tail kept)
//   paced   the same 10 MB in 10 steps 0.3 s apart (about 3 notifications per call)
//
//   node bench/progress.mjs [--bin PATH] [--runs 15] [--mb 10] [--json out.json]
//
// Prints a markdown table: p50/mean wall time per call with and without progress, and the
// ratio with/without (1.00 = no overhead). Containers are removed at the end. --mb makes the
// output smaller (the CI smoke run, tests/bench/meson.build). Exits 1 when a call fails (an
// error, isError, less output than printed, the server gone, a 120 s timeout).

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

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), runs: 15, mb: 10, json: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--runs') o.runs = Number(process.argv[++i]);
  else if (a === '--mb') o.mb = Number(process.argv[++i]);
  else if (a === '--json') o.json = process.argv[++i];
  else { process.stderr.write(`progress.mjs: unknown argument ${a}\n`); process.exit(2); }
}

// --mb MB of 100-byte lines (99 x's and a newline each), at once or in 10 steps.
const STEP = Math.floor(o.mb * 99000);
const BYTES = 10 * STEP;
const LINES = `head -c ${BYTES} /dev/zero | tr '\\0' x | fold -w 99`;
const COMMANDS = {
  burst: LINES,
  paced: `for i in 1 2 3 4 5 6 7 8 9 10; do head -c ${STEP} /dev/zero | tr '\\0' x | fold -w 99; sleep 0.3; done`,
};
const id = `bench-progress-${randomBytes(3).toString('hex')}`;
const transport = new StdioClientTransport({ command: o.bin,
  args: ['--output-limit', '20000000', '--no-network', '--timeout', '120'], stderr: 'inherit' });
const client = new Client({ name: 'msc-bench-progress', version: '0.1.0' }, { capabilities: {} });
await client.connect(transport);

async function call(command, progress) {
  let notes = 0;
  const t0 = performance.now();
  const r = await client.callTool({ name: 'terminal_execute', arguments: { computer_id: id, command } }, undefined,
    progress ? { timeout: 120000, onprogress: () => { notes++; } } : { timeout: 120000 });
  const ms = performance.now() - t0;
  if (r.isError || r.structuredContent?.exit_code !== 0 || (command !== 'true' && !(r.structuredContent?.stdout_bytes > BYTES))) {
    throw new Error(`unexpected reply: ${JSON.stringify({ ...r.structuredContent, stdout: r.structuredContent?.stdout?.length }).slice(0, 600)}`);
  }
  return { ms, notes };
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rows = [];
try {
  await call('true', false);
  for (const [name, command] of Object.entries(COMMANDS)) {
    await call(command, false);
    await call(command, true);
    const off = [];
    const on = [];
    const notes = [];
    for (let i = 0; i < o.runs; i++) {
      off.push((await call(command, false)).ms);
      const r = await call(command, true);
      on.push(r.ms);
      notes.push(r.notes);
    }
    rows.push({ name, runs: o.runs, p50Off: pct(off, 0.5), p50On: pct(on, 0.5), meanOff: mean(off), meanOn: mean(on),
      notes: mean(notes) });
  }
} finally {
  await client.close().catch(() => {});
  await new Promise((r) => {
    const p = spawn(process.env.MSC_DOCKER || 'docker', ['rm', '-f', `kilntainer-${id}`], { stdio: 'ignore' });
    p.on('exit', r);
  });
}

const f = (x) => x.toFixed(1);
console.log(`| command (${o.mb} MB of output) | runs | p50 ms without | p50 ms with progress | mean ms without | mean ms with | notifications per call | p50 ratio with/without | mean ratio with/without |`);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.runs} | ${f(r.p50Off)} | ${f(r.p50On)} | ${f(r.meanOff)} | ${f(r.meanOn)} | ${r.notes.toFixed(1)} | ${(r.p50On / r.p50Off).toFixed(2)} | ${(r.meanOn / r.meanOff).toFixed(2)} |`);
}
if (o.json) writeFileSync(o.json, JSON.stringify(rows, null, 2));
