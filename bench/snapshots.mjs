#!/usr/bin/env node
// snapshots.mjs: snapshots and forks (issue 31) against the engine's own commands, in one run,
// one server (stdio, --tools lifecycle,snapshots), one computer with 100 MB of new files:
//   - computer_snapshot against `docker commit` of the same container;
//   - computer_create {from_snapshot, count: 10} against 10 `docker run -d` of the committed
//     image at once.
//
//   node bench/snapshots.mjs [--bin PATH] [--rounds 3] [--mb 100] [--forks 10] [--flags "..."]
//
// DOCKER_HOST (and --flags "--engine podman") for Podman. Prints a markdown table (median of the
// rounds, ms) and the ratios. Everything made is removed at the end.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), rounds: 3, mb: 100, forks: 10, flags: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--rounds') o.rounds = Number(process.argv[++i]);
  else if (a === '--mb') o.mb = Number(process.argv[++i]);
  else if (a === '--forks') o.forks = Number(process.argv[++i]);
  else if (a === '--flags') o.flags = process.argv[++i].split(/\s+/).filter(Boolean);
  else { process.stderr.write('usage: snapshots.mjs [--bin PATH] [--rounds N] [--mb N] [--forks N] [--flags "..."]\n'); process.exit(2); }
}
const RUN = `bsnap${randomBytes(3).toString('hex')}`;
const run = (args) => new Promise((resolve) => {
  const p = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { err += d; });
  p.on('close', (code) => resolve({ code, out, err }));
});
async function must(args) {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`docker ${args.join(' ')}: ${r.err}`);
  return r.out.trim();
}

const t = new StdioClientTransport({ command: o.bin, env: { ...process.env }, stderr: 'ignore',
  args: ['--tools', 'lifecycle,snapshots', '--driver-id', RUN, '--max-session-computers', String(o.forks + 4),
    `--docker-run-flag=--label=msc.bench=${RUN}`, ...o.flags] });
const c = new Client({ name: 'bench-snapshots', version: '1' }, { capabilities: {} });
await c.connect(t);
async function call(name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 600000 });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return r.structuredContent;
}
const timed = async (fn) => { const t0 = performance.now(); const v = await fn(); return [performance.now() - t0, v]; };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (x) => x.toFixed(0);

const rows = { snap: [], commit: [], forks: [], runs: [] };
try {
  const comp = (await call('computer_create', { temporary: true })).computer_id;
  await call('terminal_execute', { computer_id: comp, command: `head -c ${o.mb * 1048576} /dev/urandom > /root/big && sync` });
  const ctr = `kilntainer-${comp}`;
  for (let r = 0; r < o.rounds; r++) {
    const [ms, snap] = await timed(() => call('computer_snapshot', { computer_id: comp, name: `bench ${r}` }));
    rows.snap.push(ms);
    const tag = `msc-bench-${RUN}:r${r}`;
    const [cms] = await timed(() => must(['commit', ctr, tag]));
    rows.commit.push(cms);
    const [fms, forks] = await timed(() => call('computer_create', { from_snapshot: snap.snapshot_id, count: o.forks }));
    rows.forks.push(fms);
    const [rms, ids] = await timed(() => Promise.all(Array.from({ length: o.forks }, () =>
      must(['run', '-d', '--network', 'none', '--label', `msc.bench=${RUN}`, tag, 'tail', '-f', '/dev/null']))));
    rows.runs.push(rms);
    for (const k of forks.computers) await call('computer_delete', { computer_id: k.computer_id });
    await must(['rm', '-f', ...ids]);
    for (let i = 0; i < 100; i++) {
      if ((await run(['ps', '-aq', '--filter', `label=kilntainers.snapshot.id=${snap.snapshot_id}`])).out.trim() === '') break;
      await new Promise((res) => setTimeout(res, 200));
    }
    await call('snapshot_delete', { snapshot_id: snap.snapshot_id });
    await must(['rmi', tag]);
    process.stderr.write(`round ${r}: snapshot ${f(ms)} ms, commit ${f(cms)} ms, ${o.forks} forks ${f(fms)} ms, ${o.forks} runs ${f(rms)} ms\n`);
  }
} finally {
  await c.close().catch(() => {});
  const ids = (await run(['ps', '-aq', '--filter', `label=msc.bench=${RUN}`])).out.trim();
  if (ids) await run(['rm', '-f', ...ids.split(/\s+/)]);
  const imgs = (await run(['images', '-q', '--filter', `label=kilntainers.snapshot.driver=${RUN}`])).out.trim();
  if (imgs) await run(['rmi', '-f', ...new Set(imgs.split(/\s+/))]);
}
const s = median(rows.snap), cm = median(rows.commit), fk = median(rows.forks), rn = median(rows.runs);
console.log(`| what | median ms (${o.rounds} rounds) | ratio ours / engine |`);
console.log('| --- | ---: | ---: |');
console.log(`| computer_snapshot, ${o.mb} MB of new files | ${f(s)} | ${(s / cm).toFixed(2)} |`);
console.log(`| docker commit of the same container | ${f(cm)} | 1.00 |`);
console.log(`| computer_create from_snapshot, count ${o.forks} (ready, first command possible) | ${f(fk)} | ${(fk / rn).toFixed(2)} |`);
console.log(`| ${o.forks} docker run -d of the committed image at once | ${f(rn)} | 1.00 |`);
