// The split services as a small cluster on one host: three docker-driver
// services, inventory and session apart, every link tls+tcp:// with
// certificates from scripts/make-certs (issue 10). Placement spreads new
// computers over the drivers; a driver killed with -9 makes only its own
// computers unavailable, and when it comes back they work again with their
// files; a peer with a certificate from another CA is refused.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  startServer, cleanupContainers, cid, listKilntainers, textOf, REPO, sleep, waitFor,
  containerOf,
} from './lib.mjs';

const DPREFIX = `it${randomBytes(3).toString('hex')}-d`;
const ENV = { MSC_SPLIT_TRANSPORT: 'tls', MSC_SPLIT_DRIVERS: '3', MSC_SPLIT_DRIVER_PREFIX: DPREFIX };
const BUILD = process.env.MSC_BUILD_DIR || path.join(REPO, 'build');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

function pidOf(pattern) {
  return Number(execFileSync('pgrep', ['-f', pattern]).toString().trim().split('\n')[0]);
}

function driverPid(n) {
  return pidOf(`msc-docker-driver .*--driver-id ${DPREFIX}${n}( |$)`);
}

after(() => cleanupContainers());

describe('cluster over tls+tcp with three drivers', () => {
  let s;
  const respawned = [];
  before(async () => { s = await startServer([], { mode: 'split', env: ENV }); });
  after(async () => {
    await s?.close();
    for (const p of respawned) { try { p.kill('SIGTERM'); } catch { /* gone */ } }
  });

  it('spreads new computers evenly over the drivers', async () => {
    // On a loaded host the inventory may not reach every driver yet: a named computer is
    // refused ("cannot be reached") until it does, and then placed among all three.
    const first = { computer_id: cid('place0'), temporary: false, command: 'echo 0 > /root/n' };
    await waitFor(async () => {
      try { await s.exec(first); return true; } catch (e) {
        if (!/cannot be reached/.test(e.message)) throw e;
        return false;
      }
    }, { timeoutMs: 30000, intervalMs: 500 });
    for (let i = 1; i < 6; i++) await s.exec({ computer_id: cid(`place${i}`), temporary: false, command: `echo ${i} > /root/n` });
    const mine = (await listKilntainers()).filter((c) => c.computerId?.startsWith(cid('place')));
    const per = {};
    for (const c of mine) per[c.labels['kilntainers.driver']] = (per[c.labels['kilntainers.driver']] ?? 0) + 1;
    assert.deepEqual(per, { [`${DPREFIX}1`]: 2, [`${DPREFIX}2`]: 2, [`${DPREFIX}3`]: 2 });
  });

  it('a driver killed with -9: its computers are unavailable, the others work; back again, they work with their files', async () => {
    const mine = (await listKilntainers()).filter((c) => c.computerId?.startsWith(cid('place')));
    const onTwo = mine.find((c) => c.labels['kilntainers.driver'] === `${DPREFIX}2`).computerId;
    const onOne = mine.find((c) => c.labels['kilntainers.driver'] === `${DPREFIX}1`).computerId;
    const pid = driverPid(2);
    const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } });
    await sleep(3500);   // past the client's grace period
    const t0 = Date.now();
    const down = await s.call({ computer_id: onTwo, temporary: false, command: 'cat /root/n' });
    assert.equal(down.isError, true);
    assert.match(textOf(down), new RegExp(`Computer '${onTwo}' is unavailable: its driver '${DPREFIX}2' cannot be reached`));
    assert.ok(Date.now() - t0 < 5000, 'answered at once, not at the deadline');
    const up = await s.exec({ computer_id: onOne, temporary: false, command: 'cat /root/n' });
    assert.match(up.stdout, /^\d\n$/);
    // a brand-new computer is placed on a driver that answers
    const fresh = await s.exec({ command: 'echo fresh' });
    assert.equal(fresh.stdout, 'fresh\n');

    const back = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
    respawned.push(back);
    await waitFor(async () => {
      const r = await s.call({ computer_id: onTwo, temporary: false, command: 'cat /root/n' });
      return !r.isError;
    }, { timeoutMs: 20000, intervalMs: 500 });
    const again = await s.exec({ computer_id: onTwo, temporary: false, command: 'cat /root/n' });
    assert.match(again.stdout, /^\d\n$/, 'files kept');
  });
});

describe('the session service killed with -9 and started again', () => {
  let s;
  const respawned = [];
  before(async () => { s = await startServer([], { mode: 'split', env: { ...ENV, MSC_SPLIT_DRIVER_PREFIX: `${DPREFIX}s` } }); });
  after(async () => {
    await s?.close();
    for (const p of respawned) { try { p.kill('SIGTERM'); } catch { /* gone */ } }
  });

  it('temporary computers of the lost sessions are removed, permanent ones kept, the client is told to retry', async () => {
    const temp = await s.exec({ computer_id: cid('orphan-temp'), command: 'true' });
    const perm = await s.exec({ computer_id: cid('orphan-perm'), temporary: false, command: 'echo kept > /root/k' });
    assert.equal(temp.temporary, true);
    assert.equal(perm.temporary, false);
    const out = execFileSync('pgrep', ['-f', `msc-session .*--driver-url ${DPREFIX}s1=`]).toString().trim();
    const pid = Number(out.split('\n')[0]);
    const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
    process.kill(pid, 'SIGKILL');
    await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } });
    respawned.push(spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] }));
    // the restarted service tells the inventory its earlier owners are gone
    await waitFor(async () => (await containerOf(cid('orphan-temp'))) === null, { timeoutMs: 20000, intervalMs: 500 });
    assert.ok(await containerOf(cid('orphan-perm')), 'the permanent computer is kept');
    // the stdio client's session died with the service: one clear error, then a new session
    let first;
    await waitFor(async () => {
      first = await s.call({ command: 'true' });
      return !/cannot be reached|not available/.test(textOf(first) ?? '');
    }, { timeoutMs: 20000, intervalMs: 500 });
    if (first.isError) assert.match(textOf(first), /session was lost .* retry/);
    const again = await s.exec({ computer_id: cid('orphan-perm'), temporary: false, command: 'cat /root/k' });
    assert.equal(again.stdout, 'kept\n');
  });
});

describe('the inventory killed with -9 and started again', () => {
  it('computers keep working, and the temporary ones still go when their session ends', async () => {
    const respawned = [];
    const s = await startServer([], { mode: 'split', env: { ...ENV, MSC_SPLIT_DRIVER_PREFIX: `${DPREFIX}i` } });
    try {
      await s.exec({ computer_id: cid('inv-temp'), command: 'echo a > /root/a' });
      await s.exec({ computer_id: cid('inv-perm'), temporary: false, command: 'echo p > /root/p' });
      const out = execFileSync('pgrep', ['-f', `msc-inventory .*--driver-url ${DPREFIX}i1=`]).toString().trim();
      const pid = Number(out.split('\n')[0]);
      const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
      process.kill(pid, 'SIGKILL');
      await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } });
      respawned.push(spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] }));
      await sleep(500);
      assert.equal((await s.exec({ computer_id: cid('inv-temp'), command: 'cat /root/a' })).stdout, 'a\n');
      assert.equal((await s.exec({ computer_id: cid('inv-perm'), temporary: false, command: 'cat /root/p' })).stdout, 'p\n');
      await s.eof(20000);
      await waitFor(async () => (await containerOf(cid('inv-temp'))) === null, { timeoutMs: 15000, intervalMs: 500 });
      assert.ok(await containerOf(cid('inv-perm')), 'the permanent computer is kept');
    } finally {
      await s.close();
      for (const p of respawned) { try { p.kill('SIGTERM'); } catch { /* gone */ } }
    }
  });
});

describe('the inventory and then the session service killed with -9', () => {
  it('the computers claimed again at the new inventory: the temporary ones of the lost sessions go, permanent ones stay', async () => {
    const respawned = [];
    const pfx = `${DPREFIX}b`;
    const s = await startServer([], { mode: 'split', env: { ...ENV, MSC_SPLIT_DRIVER_PREFIX: pfx } });
    try {
      await s.exec({ computer_id: cid('both-temp'), command: 'true' });
      await s.exec({ computer_id: cid('both-perm'), temporary: false, command: 'true' });
      const restart = async (prog) => {
        const pid = pidOf(`${prog} .*--driver-url ${pfx}1=`);
        const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
        process.kill(pid, 'SIGKILL');
        await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } });
        respawned.push(spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] }));
      };
      await restart('msc-inventory');
      // the session service sees a new connection and tells the new inventory what its sessions hold
      await waitFor(() => /claimed 2 computer\(s\)/.test(s.stderr()), { timeoutMs: 10000 });
      await restart('msc-session');
      const gone = await waitFor(async () => (await containerOf(cid('both-temp'))) === null, { timeoutMs: 15000, intervalMs: 500 });
      assert.ok(gone, `the temporary computer of the lost session was removed:\n${s.stderr().slice(-2000)}`);
      assert.ok(await containerOf(cid('both-perm')), 'the permanent computer is kept');
    } finally {
      await s.close();
      for (const p of respawned) { try { p.kill('SIGTERM'); } catch { /* gone */ } }
    }
  });
});

describe('a session ends while its driver is slow to remove computers', () => {
  it('DELETE answers within seconds, and the computer goes when the driver gets to it', async () => {
    const port = await freePort();
    const pfx = `${DPREFIX}r`;
    const split = spawn(path.join(REPO, 'scripts', 'run-split'),
      ['--transport', 'http', '--port', String(port)],
      { env: { ...process.env, ...ENV, MSC_SPLIT_DRIVERS: '1', MSC_SPLIT_DRIVER_PREFIX: pfx }, stdio: ['pipe', 'ignore', 'ignore'] });
    let driver = 0;
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const url = `http://127.0.0.1:${port}/mcp`;
      const init = await fetch(url, { method: 'POST', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      const sid = init.headers.get('mcp-session-id');
      // The edge answers /healthz before the driver's link is up (slow under the sanitizers):
      // until then the call says the driver cannot be reached and to retry, as a client would.
      let r;
      const t1 = Date.now();
      do {
        r = await (await fetch(url, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': sid },
          body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'terminal_execute', arguments: { computer_id: cid('slow-rm'), command: 'true' } } }) })).json();
      } while (r.result?.isError && /cannot be reached/.test(JSON.stringify(r)) && Date.now() - t1 < 20000 && await sleep(250, true));
      assert.equal(r.result.isError, false, JSON.stringify(r));
      // the driver stops answering (its host still acknowledges TCP: alive, just slow)
      driver = pidOf(`msc-docker-driver .*--driver-id ${pfx}1( |$)`);
      process.kill(driver, 'SIGSTOP');
      const t0 = Date.now();
      const del = await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid }, signal: AbortSignal.timeout(20000) });
      const ms = Date.now() - t0;
      assert.equal(del.status, 200, await del.text());
      assert.ok(ms < 10000, `DELETE took ${ms} ms`);
      assert.ok(await containerOf(cid('slow-rm')), 'still there while the driver is stopped');
      process.kill(driver, 'SIGCONT');
      const gone = await waitFor(async () => (await containerOf(cid('slow-rm'))) === null, { timeoutMs: 30000, intervalMs: 500 });
      assert.ok(gone, 'removed once the driver answers again');
    } finally {
      if (driver) { try { process.kill(driver, 'SIGCONT'); } catch { /* gone */ } }
      if (split.exitCode === null && split.signalCode === null) {
        const exited = new Promise((res) => split.on('exit', res));
        split.kill('SIGTERM');
        await Promise.race([exited, sleep(15000, null, { ref: false })]);
      }
    }
  });
});

// Preview URLs (issue 30) where the driver serves other hosts (MSC_SPLIT_HOST: one of this host's
// own non-loopback addresses, so every link crosses an address other hosts reach): users reach an
// edge elsewhere and no edge proxies preview URLs, so the default localhost URL is refused with the
// reason; with --preview-domain (a wildcard name of the driver's host) the driver's own listener
// serves the URL.
describe('preview URLs on a driver that serves other hosts', () => {
  const hostIp = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  const SERVER = readFileSync(path.join(REPO, 'tests', 'browser', 'preview_server.pl'), 'utf8');
  it('refuses a localhost URL with the reason; serves the URL of its --preview-domain', { skip: !hostIp && 'no non-loopback IPv4 address here' }, async () => {
    const proxyDir = mkdtempSync(path.join(os.tmpdir(), 'msc-cluster-preview-'));
    const env = { ...ENV, MSC_SPLIT_DRIVERS: '1', MSC_SPLIT_DRIVER_PREFIX: `${DPREFIX}p`, MSC_SPLIT_HOST: hostIp, MSC_PROXY_DIR: proxyDir };
    const id = cid('preview');
    let s = await startServer(['--tools', 'ports', '--preview-listen', '127.0.0.1:0'], { mode: 'split', env });
    try {
      // A computer that does not exist (or is another's): not found, and no word of the driver.
      const none = await s.call({ computer_id: cid('nosuch'), port: 8000 }, { name: 'computer_expose_port' });
      assert.equal(none.isError, true, JSON.stringify(none));
      assert.match(textOf(none), /not found/i);
      assert.doesNotMatch(textOf(none), new RegExp(`${DPREFIX}p|would name`));
      await s.exec({ computer_id: id, temporary: false, command: 'true' });
      const r = await s.call({ computer_id: id, port: 8000 }, { name: 'computer_expose_port' });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), new RegExp(`Preview URLs of computers on driver '${DPREFIX}p1' would name localhost, which reaches only the host a browser runs on: this driver serves other hosts \\(the cluster layout\\) and an edge does not proxy preview URLs\\. Give the driver --preview-domain`));
    } finally {
      await s.close();
    }
    s = await startServer(['--tools', 'ports,lifecycle', '--preview-listen', '127.0.0.1:0', '--preview-domain', 'preview.cluster.test'], { mode: 'split', env });
    try {
      const start = `cat > /tmp/s.pl <<'PERL_EOF'\n${SERVER}\nPERL_EOF\n(setsid perl /tmp/s.pl 8000 clusterweb >/dev/null 2>&1 &) ; sleep 0.5; echo started`;
      assert.match((await s.exec({ computer_id: id, temporary: false, command: start })).stdout, /started/);
      const r = await s.call({ computer_id: id, port: 8000 }, { name: 'computer_expose_port' });
      assert.equal(r.isError, false, JSON.stringify(r));
      const m = /^http:\/\/([0-9a-f]{32})\.preview\.cluster\.test:(\d+)\/$/.exec(r.structuredContent.url);
      assert.ok(m, r.structuredContent.url);
      const answer = await new Promise((resolve) => {
        const c = net.connect(Number(m[2]), '127.0.0.1');
        let data = '';
        c.on('connect', () => c.write(`GET /x HTTP/1.1\r\nHost: ${m[1]}.preview.cluster.test:${m[2]}\r\nConnection: close\r\n\r\n`));
        c.on('data', (d) => { data += d; });
        c.on('error', () => resolve(data));
        c.on('close', () => resolve(data));
      });
      assert.match(answer, /hello from clusterweb port 8000 path \/x/);
      assert.equal((await s.call({ computer_id: id }, { name: 'computer_delete' })).isError, false);
    } finally {
      await s.close();
      rmSync(proxyDir, { recursive: true, force: true });
    }
  });
});

describe('two HTTP edges in front of one session service', () => {
  it('a session (and a 2026 sandbox handle) opened on one edge is served by the other', async () => {
    const port = await freePort();
    const split = spawn(path.join(REPO, 'scripts', 'run-split'),
      ['--transport', 'http', '--port', String(port)],
      { env: { ...process.env, ...ENV, MSC_SPLIT_DRIVERS: '1', MSC_SPLIT_DRIVER_PREFIX: `${DPREFIX}h` }, stdio: ['pipe', 'ignore', 'ignore'] });
    let second;
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      // the second edge: the first one's command line, on another port
      const pid = Number(execFileSync('pgrep', ['-f', `msc-edge .*--port ${port}`]).toString().trim().split('\n')[0]);
      const argv = readFileSync(`/proc/${pid}/cmdline`).toString().split('\0').filter(Boolean);
      const port2 = await freePort();
      argv[argv.indexOf('--port') + 1] = String(port2);
      second = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port2}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const init = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      const sid = init.headers.get('mcp-session-id');
      assert.ok(sid);
      const call = async (p, id, command) => (await fetch(`http://127.0.0.1:${p}/mcp`, { method: 'POST',
        headers: { ...headers, 'Mcp-Session-Id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'terminal_execute', arguments: { computer_id: cid('edges'), command } } }) })).json();
      const a = await call(port, 2, 'echo from-one > /root/e');
      assert.equal(a.result.isError, false, JSON.stringify(a));
      const b = await call(port2, 3, 'cat /root/e');
      assert.equal(b.result.structuredContent.stdout, 'from-one\n', 'the other edge serves the same session and computer');
      const del = await fetch(`http://127.0.0.1:${port2}/mcp`, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
      assert.equal(del.status, 200);
      const gone = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'ping' }) });
      assert.equal(gone.status, 404, 'ended on one edge, ended for all');
      await waitFor(async () => (await containerOf(cid('edges'))) === null, { timeoutMs: 15000, intervalMs: 500 });
      // MCP 2026-07-28: a sandbox handle minted on one edge is served by the other, and by it
      // again after it restarted (handles live in the session service)
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      const mcall = async (p, id, name, args) => (await fetch(`http://127.0.0.1:${p}/mcp`, { method: 'POST',
        headers: { ...headers, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': name },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } }) })).json();
      const h1 = await mcall(port, 5, 'terminal_execute', { command: 'echo handle > /root/h' });
      const { sandbox_handle: handle, computer_id: hid } = h1.result.structuredContent;
      assert.ok(handle, JSON.stringify(h1));
      const h2 = await mcall(port2, 6, 'terminal_execute', { command: 'cat /root/h', sandbox_handle: handle });
      assert.equal(h2.result.structuredContent.stdout, 'handle\n');
      assert.equal(h2.result.structuredContent.computer_id, hid);
      const exited2 = new Promise((res) => second.once('exit', res));
      second.kill('SIGTERM');
      await exited2;
      second = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'] });
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port2}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      const h3 = await mcall(port2, 7, 'terminal_execute', { command: 'cat /root/h', sandbox_handle: handle });
      assert.equal(h3.result.structuredContent.stdout, 'handle\n', 'the handle outlived the edge');
      const rel = await mcall(port, 8, 'computer_release', { sandbox_handle: handle });
      assert.equal(rel.result.structuredContent.released, true, JSON.stringify(rel));
      await waitFor(async () => (await containerOf(hid)) === null, { timeoutMs: 15000, intervalMs: 500 });
    } finally {
      second?.kill('SIGTERM');
      if (split.exitCode === null && split.signalCode === null) {
        const exited = new Promise((res) => split.on('exit', res));
        split.kill('SIGTERM');
        await Promise.race([exited, sleep(15000, null, { ref: false })]);
      }
    }
  });
});

// A session service so loaded that it answers late (here: stopped with SIGSTOP for longer than
// the edge's 15 s bound on the calls it answers itself): a tools/call waits for it, as the call
// itself would, instead of failing at the Touch before it with "The session service is
// unavailable (deadline exceeded)" (1,246 of 20,000 calls at 10,000 sessions, bench/RESULTS.md
// 2026-12-07 13:12).
describe('an HTTP edge whose session service answers late', () => {
  it('a tools/call waits for the Touch before it like for the call', async () => {
    const SESSION_CALL_MS = 15000;
    const port = await freePort();
    const split = spawn(path.join(REPO, 'scripts', 'run-split'),
      ['--transport', 'http', '--port', String(port)],
      { env: { ...process.env, ...ENV, MSC_SPLIT_DRIVERS: '1', MSC_SPLIT_DRIVER_PREFIX: `${DPREFIX}t` }, stdio: ['pipe', 'ignore', 'ignore'] });
    let stopped = 0;
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const init = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      const sid = init.headers.get('mcp-session-id');
      assert.ok(sid);
      const call = async (id, command) => {
        const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { ...headers, 'Mcp-Session-Id': sid },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'terminal_execute', arguments: { computer_id: cid('touch'), command } } }) });
        return { status: r.status, body: await r.text() };
      };
      const first = await call(2, 'true');
      assert.equal(first.status, 200, first.body);
      const session = Number(execFileSync('pgrep', ['-P', String(split.pid), '-f', 'msc-session']).toString().trim().split('\n')[0]);
      process.kill(session, 'SIGSTOP');
      stopped = session;
      const t0 = Date.now();
      const late = call(3, 'echo late');
      await sleep(SESSION_CALL_MS + 1500);
      process.kill(session, 'SIGCONT');
      stopped = 0;
      const r = await late;
      assert.equal(r.status, 200, `${r.status} after ${Date.now() - t0} ms: ${r.body}`);
      assert.equal(JSON.parse(r.body).result.structuredContent.stdout, 'late\n', r.body);
      assert.ok(Date.now() - t0 > SESSION_CALL_MS, 'the call was answered after the service came back');
      const del = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
      assert.equal(del.status, 200);
      await waitFor(async () => (await containerOf(cid('touch'))) === null, { timeoutMs: 15000, intervalMs: 500 });
    } finally {
      if (stopped) process.kill(stopped, 'SIGCONT');
      if (split.exitCode === null && split.signalCode === null) {
        const exited = new Promise((res) => split.on('exit', res));
        split.kill('SIGTERM');
        await Promise.race([exited, sleep(15000, null, { ref: false })]);
      }
    }
  });
});

describe('an HTTP edge whose session service is down', () => {
  it('says the service is unavailable (not overloaded) and when to retry', async () => {
    const port = await freePort();
    const edge = spawn(path.join(BUILD, 'edge', 'msc-edge'),
      ['--transport', 'http', '--port', String(port), '--session-url', `ipc://${os.tmpdir()}/msc-no-session-${process.pid}.sock`],
      { stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, { timeoutMs: 15000 });
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
      const init = () => fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      // at first the call waits a little for the service to come, then says it cannot be reached
      const first = await init();
      assert.equal(first.status, 503);
      assert.match((await first.json()).error.message, /session service is unavailable.*cannot be reached.*retry/);
      // past that grace the call is not even sent: still "unavailable", with Retry-After
      await sleep(3200);
      for (const r of [await init(), await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers: { 'Mcp-Session-Id': 'x'.repeat(32) } })]) {
        assert.equal(r.status, 503);
        assert.ok(Number(r.headers.get('retry-after')) > 0, 'Retry-After');
        const { message } = (await r.json()).error;
        assert.match(message, /session service is unavailable: it cannot be reached; retry/);
        assert.doesNotMatch(message, /overloaded/);
      }
    } finally { edge.kill('SIGTERM'); }
  });
});

describe('certificates', () => {
  it('a peer whose certificate comes from another CA is refused', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'msc-certs-'));
    try {
      execFileSync(path.join(REPO, 'scripts', 'make-certs'), [path.join(dir, 'a'), 'session'], { stdio: 'ignore' });
      execFileSync(path.join(REPO, 'scripts', 'make-certs'), [path.join(dir, 'b'), 'edge'], { stdio: 'ignore' });
      const port = await freePort();
      const url = `tls+tcp://127.0.0.1:${port}`;
      const session = spawn(path.join(BUILD, 'services', 'session', 'msc-session'),
        ['--listen', url, '--inventory-url', 'ipc:///nonexistent-inv.sock',
          '--tls-ca', path.join(dir, 'a', 'ca.pem'), '--tls-cert', path.join(dir, 'a', 'session.pem')],
        { stdio: ['ignore', 'ignore', 'ignore'] });
      try {
        await sleep(300);
        const edge = spawn(path.join(BUILD, 'edge', 'msc-edge'),
          ['--session-url', url, '--tls-ca', path.join(dir, 'b', 'ca.pem'), '--tls-cert', path.join(dir, 'b', 'edge.pem')],
          { stdio: ['pipe', 'pipe', 'ignore'] });
        let out = '';
        edge.stdout.on('data', (d) => { out += d; });
        edge.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'terminal_execute', arguments: { command: 'true' } } })}\n`);
        await waitFor(() => out.includes('\n'), { timeoutMs: 20000 });
        edge.stdin.end();
        const reply = JSON.parse(out.split('\n')[0]);
        assert.equal(reply.result.isError, true);
        assert.match(reply.result.content[0].text, /session service is not available/);
        edge.kill();
      } finally { session.kill(); }
      // and at startup: plain TCP (to loopback too) without --allow-plain-tcp, and any
      // scheme but tls+tcp, ipc, inproc and tcp, are refused
      for (const [url, why] of [['tcp://10.1.2.3:5555', /plain TCP .*--allow-plain-tcp/],
        ['tcp://127.0.0.1:5555', /plain TCP \(no authentication, loopback included\)/],
        ['ws://127.0.0.1:5555', /must be tls\+tcp:\/\/, ipc:\/\/ or inproc:\/\//],
        ['wss://127.0.0.1:5555', /must be tls\+tcp:\/\//]]) {
        for (const extra of url.startsWith('tcp') ? [[]] : [[], ['--allow-plain-tcp']]) {
          const r = spawn(path.join(BUILD, 'edge', 'msc-edge'), ['--session-url', url, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          r.stderr.on('data', (d) => { err += d; });
          const code = await new Promise((res) => r.on('close', res));  // after stderr is read
          assert.equal(code, 1, `${url} ${extra} is refused`);
          assert.match(err, why);
        }
      }
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
