#!/usr/bin/env node
// files.mjs: the file tools and the copy tools (issue 29) against `docker cp` of the same bytes,
// in one run, one server (stdio, --tools files --workspace), one computer:
//   - file_write + file_read of a 1 MB file (base64 in, the reply limit raised so it answers
//     whole) against `docker cp` in and out of the same file;
//   - file_write + file_read of a --rw-mb MB file (100 by default, 0 skips it), as the tools can
//     carry it: in parts of 2 MiB (file_write's bound), one file each, every part written and
//     then read back, against `docker cp` in and out of the same file whole;
//   - computer_upload and computer_download of one --mb MB file against `docker cp` in and out;
//   - computer_upload and computer_download of a folder of --files small files against `docker
//     cp` in and out.
//
//   node bench/files.mjs [--bin PATH] [--rounds 3] [--mb 100] [--rw-mb 100] [--files 10000] [--flags "..."]
//
// Prints a markdown table (median of the rounds, ms) and the ratios ours / docker cp; appends it
// to bench/RESULTS.md unless BENCH_NO_APPEND=1. Everything made is removed at the end.
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const SDK = path.join(REPO, 'tests', 'integration', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
if (!fs.existsSync(SDK)) {
  process.stderr.write(`bench: MCP SDK not installed; run: npm ci --prefix ${path.join(REPO, 'tests', 'integration')}\n`);
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(SDK, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client', 'stdio.js')).href);

const o = { bin: process.env.MSC_BIN || path.join(REPO, 'build', 'mcp-sandbox-computer'), rounds: 3, mb: 100, rwmb: 100, files: 10000, flags: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--bin') o.bin = process.argv[++i];
  else if (a === '--rounds') o.rounds = Number(process.argv[++i]);
  else if (a === '--mb') o.mb = Number(process.argv[++i]);
  else if (a === '--rw-mb') o.rwmb = Number(process.argv[++i]);
  else if (a === '--files') o.files = Number(process.argv[++i]);
  else if (a === '--flags') o.flags = process.argv[++i].split(/\s+/).filter(Boolean);
  else { process.stderr.write('usage: files.mjs [--bin PATH] [--rounds N] [--mb N] [--rw-mb N] [--files N] [--flags "..."]\n'); process.exit(2); }
}
const RUN = `bfiles${randomBytes(3).toString('hex')}`;
const WS = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'msc-bench-files-')));
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

const t = new StdioClientTransport({ command: o.bin, env: { ...process.env, MSC_FAST_EXEC_DIR: path.join(WS, '.fx') }, stderr: 'ignore',
  args: ['--tools', 'files', '--workspace', WS, '--driver-id', RUN, '--reply-output-limit', '8388608', '--output-limit', '8388608',
    `--docker-run-flag=--label=msc.bench=${RUN}`, ...o.flags] });
const c = new Client({ name: 'bench-files', version: '1' }, { capabilities: {} });
await c.connect(t);
async function call(name, args) {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 600000 });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  return r;
}
const timed = async (fn) => { const t0 = performance.now(); const v = await fn(); return [performance.now() - t0, v]; };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (x) => x.toFixed(0);
const sha = (b) => createHash('sha256').update(b).digest('hex');

const mb1 = randomBytes(1024 * 1024);
fs.writeFileSync(path.join(WS, 'one.bin'), mb1);
fs.writeFileSync(path.join(WS, 'big.bin'), randomBytes(o.mb * 1024 * 1024));
const PART = 2 * 1024 * 1024;   // file_write's bound
const rwbuf = o.rwmb > 0 ? randomBytes(o.rwmb * 1024 * 1024) : null;
if (rwbuf) fs.writeFileSync(path.join(WS, 'rw.bin'), rwbuf);
const per = 100;
for (let i = 0; i < o.files; i++) {
  const d = path.join(WS, 'tree', `d${Math.floor(i / per)}`);
  if (i % per === 0) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(d, `f${i}`), `file ${i}\n`);
}

const rows = { rw: [], cp1: [], rwbig: [], cprw: [], up: [], down: [], cpbig: [], tup: [], tdown: [], cptree: [] };
try {
  const first = await call('terminal_execute', { command: 'mkdir -p /b' });
  const comp = first.structuredContent.computer_id;
  const ctr = `kilntainer-${comp}`;
  const b64 = mb1.toString('base64');
  for (let r = 0; r < o.rounds; r++) {
    const [rw] = await timed(async () => {
      await call('file_write', { path: `/b/one${r}.bin`, content: b64, encoding: 'base64' });
      const back = await call('file_read', { path: `/b/one${r}.bin` });
      const blob = back.content.find((x) => x.type === 'resource');
      if (!blob || sha(Buffer.from(blob.resource.blob, 'base64')) !== sha(mb1)) throw new Error('file_read: not the bytes written');
    });
    rows.rw.push(rw);
    const [cp1] = await timed(async () => {
      await must(['cp', path.join(WS, 'one.bin'), `${ctr}:/b/cp${r}.bin`]);
      await must(['cp', `${ctr}:/b/cp${r}.bin`, path.join(WS, `cp${r}.bin`)]);
    });
    rows.cp1.push(cp1);
    if (rwbuf) {
      const got = [];
      const [rwbig] = await timed(async () => {
        for (let k = 0; k * PART < rwbuf.length; k++) {
          await call('file_write', { path: `/b/rw${r}/p${k}`, content: rwbuf.subarray(k * PART, (k + 1) * PART).toString('base64'),
            encoding: 'base64', make_dirs: true });
        }
        for (let k = 0; k * PART < rwbuf.length; k++) {
          const back = await call('file_read', { path: `/b/rw${r}/p${k}` });
          const blob = back.content.find((x) => x.type === 'resource');
          if (!blob) throw new Error(`file_read of a 2 MiB part: no resource: ${back.content[0].text.slice(0, 300)}`);
          got.push(blob.resource.blob);
        }
      });
      if (sha(Buffer.concat(got.map((b) => Buffer.from(b, 'base64')))) !== sha(rwbuf)) throw new Error('file_read: not the bytes written');
      rows.rwbig.push(rwbig);
      const [cprw] = await timed(async () => {
        await must(['cp', path.join(WS, 'rw.bin'), `${ctr}:/b/cprw${r}.bin`]);
        await must(['cp', `${ctr}:/b/cprw${r}.bin`, path.join(WS, `cprw${r}.bin`)]);
      });
      rows.cprw.push(cprw);
    }
    const [up] = await timed(() => call('computer_upload', { local_path: 'big.bin', path: `/b/big${r}.bin` }));
    const [down] = await timed(() => call('computer_download', { path: `/b/big${r}.bin`, local_path: `big${r}.bin` }));
    rows.up.push(up);
    rows.down.push(down);
    const [cpbig] = await timed(async () => {
      await must(['cp', path.join(WS, 'big.bin'), `${ctr}:/b/cpbig${r}.bin`]);
      await must(['cp', `${ctr}:/b/cpbig${r}.bin`, path.join(WS, `cpbig${r}.bin`)]);
    });
    rows.cpbig.push(cpbig);
    const [tup] = await timed(() => call('computer_upload', { local_path: 'tree', path: `/b/tree${r}` }));
    const [tdown] = await timed(() => call('computer_download', { path: `/b/tree${r}`, local_path: `tree${r}` }));
    rows.tup.push(tup);
    rows.tdown.push(tdown);
    const [cptree] = await timed(async () => {
      await must(['cp', path.join(WS, 'tree'), `${ctr}:/b/cptree${r}`]);
      await must(['cp', `${ctr}:/b/cptree${r}`, path.join(WS, `cptree${r}`)]);
    });
    rows.cptree.push(cptree);
    if (sha(fs.readFileSync(path.join(WS, `big${r}.bin`))) !== sha(fs.readFileSync(path.join(WS, 'big.bin')))) throw new Error('download: not the bytes');
    if (fs.readdirSync(path.join(WS, `tree${r}`)).length !== Math.ceil(o.files / per)) throw new Error('tree download: folders missing');
    await call('terminal_execute', { command: `rm -rf /b/*${r}*` });
    for (const n of [`big${r}.bin`, `cpbig${r}.bin`, `cp${r}.bin`, `cprw${r}.bin`]) fs.rmSync(path.join(WS, n), { force: true });
    for (const n of [`tree${r}`, `cptree${r}`]) fs.rmSync(path.join(WS, n), { recursive: true, force: true });
    process.stderr.write(`round ${r}: 1 MB write+read ${f(rw)} ms (docker cp ${f(cp1)}), ${rwbuf ? `${o.rwmb} MB write+read ${f(rows.rwbig[r])} (docker cp ${f(rows.cprw[r])}), ` : ''}${o.mb} MB up ${f(up)} down ${f(down)} (docker cp both ${f(cpbig)}), ${o.files} files up ${f(tup)} down ${f(tdown)} (docker cp both ${f(cptree)})\n`);
  }
} finally {
  await c.close().catch(() => {});
  const ids = (await run(['ps', '-aq', '--filter', `label=msc.bench=${RUN}`])).out.trim();
  if (ids) await run(['rm', '-f', ...ids.split(/\s+/)]);
  fs.rmSync(WS, { recursive: true, force: true });
}
const m = Object.fromEntries(Object.entries(rows).filter(([, v]) => v.length).map(([k, v]) => [k, median(v)]));
const lines = [
  `| what | median ms (${o.rounds} rounds) | ratio ours / docker cp |`,
  '| --- | ---: | ---: |',
  `| file_write + file_read, 1 MB | ${f(m.rw)} | ${(m.rw / m.cp1).toFixed(2)} |`,
  `| docker cp in + out, 1 MB | ${f(m.cp1)} | 1.00 |`,
  ...(rwbuf ? [
    `| file_write + file_read, ${o.rwmb} MB (${Math.ceil(rwbuf.length / PART)} parts of 2 MiB) | ${f(m.rwbig)} | ${(m.rwbig / m.cprw).toFixed(2)} |`,
    `| docker cp in + out, ${o.rwmb} MB | ${f(m.cprw)} | 1.00 |`] : []),
  `| computer_upload + computer_download, one ${o.mb} MB file | ${f(m.up + m.down)} (up ${f(m.up)}, down ${f(m.down)}) | ${((m.up + m.down) / m.cpbig).toFixed(2)} |`,
  `| docker cp in + out, ${o.mb} MB | ${f(m.cpbig)} | 1.00 |`,
  `| computer_upload + computer_download, ${o.files} small files | ${f(m.tup + m.tdown)} (up ${f(m.tup)}, down ${f(m.tdown)}) | ${((m.tup + m.tdown) / m.cptree).toFixed(2)} |`,
  `| docker cp in + out, ${o.files} small files | ${f(m.cptree)} | 1.00 |`,
];
console.log(lines.join('\n'));
if (process.env.BENCH_NO_APPEND !== '1') {
  const rev = await new Promise((resolve) => {
    const p = spawn('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('close', () => resolve(out.trim()));
  });
  fs.appendFileSync(path.join(HERE, 'RESULTS.md'), `\n## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC files (rev ${rev}, ${os.cpus().length} cores, bench/files.mjs)\n\nThe file tools and computer_upload/computer_download (issue 29) against \`docker cp\` of the same bytes, one stdio server, one computer.\n\n${lines.join('\n')}\n`);
}
