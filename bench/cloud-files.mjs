#!/usr/bin/env node
// cloud-files.mjs: the file tools on the e2b or modal backend (issue 29) against plain commands,
// on the local fake (tests/e2b/fake_e2b.py, tests/modal/fake_modal.py: Docker containers), in
// one run, one server (stdio, --tools files), one computer:
//   - the first file tool call of a computer (it copies the exec helper in) against a later one;
//   - file_write + file_read of N bytes of text against terminal_execute `cat > F` with the same
//     stdin + terminal_execute `cat F`, timed in turns (a, b, b, a, ...).
//
//   node bench/cloud-files.mjs [--backend e2b|modal] [--bin PATH] [--n 20] [--bytes 65536]
//
// The fakes run each command as a `docker exec`, so the absolute figures say nothing of the real
// services; the ratios say what the helper adds to one command (the same number of round trips).
import path from 'node:path';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
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

const o = { backend: 'e2b', bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), n: 20, bytes: 65536 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--backend') o.backend = process.argv[++i];
  else if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--n') o.n = Number(process.argv[++i]);
  else if (a === '--bytes') o.bytes = Number(process.argv[++i]);
  else { process.stderr.write('usage: cloud-files.mjs [--backend e2b|modal] [--bin PATH] [--n N] [--bytes B]\n'); process.exit(2); }
}
if (!['e2b', 'modal'].includes(o.backend)) { process.stderr.write('--backend is e2b or modal\n'); process.exit(2); }

// The fake, and the server's environment pointing at it (as tests/e2b and tests/modal do).
const rnd = randomBytes(6).toString('hex');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'msc-bench-cloud-files-'));
const fakeArgs = o.backend === 'e2b'
  ? [path.join(REPO, 'tests', 'e2b', 'fake_e2b.py'), '--key', `e2b_fake${rnd}`]
  : [path.join(REPO, 'tests', 'modal', 'fake_modal.py'), '--token-id', `ak-fake${rnd}`, '--token-secret', `as-fake${rnd}`];
// The modal fake needs grpcio (Debian's python3-grpcio): MODAL_FAKE_PYTHON names a python with it.
const py = o.backend === 'modal' ? (process.env.MODAL_FAKE_PYTHON || '/usr/bin/python3') : 'python3';
const fake = spawn(py, fakeArgs, { stdio: ['ignore', 'pipe', 'ignore'] });
const port = await new Promise((resolve, reject) => {
  let out = '';
  fake.stdout.on('data', (c) => { out += c; const m = /PORTS? (\d+)/.exec(out); if (m) resolve(m[1]); });
  fake.on('exit', (code) => reject(new Error(`the fake exited ${code}`)));
});
const url = `http://127.0.0.1:${port}`;
const env = o.backend === 'e2b'
  ? { ...process.env, E2B_API_KEY: `e2b_fake${rnd}`, E2B_API_URL: url, E2B_SANDBOX_URL: url, E2B_DOMAIN: '' }
  : { ...process.env, MODAL_SERVER_URL: url, MODAL_TOKEN_ID: `ak-fake${rnd}`, MODAL_TOKEN_SECRET: `as-fake${rnd}`,
      MODAL_CONFIG_PATH: path.join(tmp, 'absent.toml'), MODAL_PROFILE: '', MODAL_ENVIRONMENT: '' };

const t = new StdioClientTransport({ command: o.bin, args: ['--backend', o.backend, '--tools', 'files',
  '--reply-output-limit', '0'], stderr: 'ignore', env });
const c = new Client({ name: 'bench-cloud-files', version: '1' }, { capabilities: {} });
await c.connect(t);
async function call(name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return r.structuredContent;
}
// Two calls timed in turns, so that both see the same load on a shared machine.
async function timePair(fa, fb) {
  const ta = [], tb = [];
  const one = async (fn, into) => { const t0 = performance.now(); await fn(); into.push(performance.now() - t0); };
  for (let i = 0; i < o.n; i++) {
    if (i % 2 === 0) { await one(fa, ta); await one(fb, tb); } else { await one(fb, tb); await one(fa, ta); }
  }
  const stats = (ms) => { ms.sort((x, y) => x - y); return { p50: ms[Math.floor(ms.length / 2)], p90: ms[Math.floor(ms.length * 0.9)] }; };
  return [stats(ta), stats(tb)];
}
const f = (x) => x.toFixed(1);

// Text lines of printable bytes, o.bytes in all.
const line = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_=+.,;:!?()[]{}<>@#%^&*~|/abcd\n';
const text = line.repeat(Math.ceil(o.bytes / line.length)).slice(0, o.bytes - 1) + '\n';
let firstMs, laterMs;
try {
  await call('terminal_execute', { command: 'true' });   // the computer, outside the timings
  let t0 = performance.now();
  await call('file_write', { path: '/tmp/bench-first.txt', content: 'x\n' });
  firstMs = performance.now() - t0;
  t0 = performance.now();
  await call('file_write', { path: '/tmp/bench-first.txt', content: 'y\n' });
  laterMs = performance.now() - t0;
  const limit = Math.min(1000000, text.length);   // lines: every one in one reply
  const [tools, cmds] = await timePair(async () => {
    await call('file_write', { path: '/tmp/bench-a.txt', content: text });
    const r = await call('file_read', { path: '/tmp/bench-a.txt', limit });
    if (r.content.length !== text.length) throw new Error(`file_read: ${r.content.length} bytes`);
  }, async () => {
    await call('terminal_execute', { command: 'cat > /tmp/bench-b.txt', stdin: text });
    const r = await call('terminal_execute', { command: 'cat /tmp/bench-b.txt' });
    if (r.stdout.length !== text.length) throw new Error(`cat: ${r.stdout.length} bytes`);
  });
  console.log(`| ${o.backend} fake, ${o.n} pairs of ${o.bytes} bytes | p50 ms | p90 ms | ratio (p50) |`);
  console.log('|---|---|---|---|');
  console.log(`| file_write + file_read | ${f(tools.p50)} | ${f(tools.p90)} | ${(tools.p50 / cmds.p50).toFixed(2)} × commands |`);
  console.log(`| terminal_execute cat > F (stdin) + cat F | ${f(cmds.p50)} | ${f(cmds.p90)} | 1 |`);
  console.log(`| first file_write of the computer (copies the helper in) | ${f(firstMs)} | | ${(firstMs / laterMs).toFixed(1)} × a later one (${f(laterMs)} ms) |`);
} finally {
  await c.close();
  fake.kill('SIGTERM');   // the fake removes its containers
  await new Promise((r) => (fake.exitCode !== null ? r() : fake.once('exit', r)));
  rmSync(tmp, { recursive: true, force: true });
}
