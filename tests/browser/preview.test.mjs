// Preview URLs (issue 30) in Debian's headless Chromium: the real server over HTTP with --tools ports, a perl
// HTTP + WebSocket echo server (preview_server.pl) inside a computer, computer_expose_port's URL opened by the
// browser, a WebSocket echo through it; then, over raw sockets, each request of a kept-alive connection routed
// by its own Host (another computer's capability, an unknown one, the MCP endpoint's names), request smuggling
// refused, 502 for a port nothing listens on, the per-computer cap, the URL after computer_restart, revocation.
// Run: meson test -C build browser/preview (exits 77 when the browser or node_modules is missing).
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.MSC_CHROMIUM || '/usr/bin/chromium';
for (const need of [path.join(HERE, 'node_modules', 'playwright-core'), CHROMIUM]) {
  if (!existsSync(need)) { console.log(`# SKIP browser/preview: ${need} is missing`); process.exit(77); }
}
const { chromium } = await import('playwright-core');
const H = await import('./host.mjs');
const RUN = `pv${randomBytes(3).toString('hex')}`;
const A = `${RUN}-a`, B = `${RUN}-b`;
const SERVER = readFileSync(path.join(HERE, 'preview_server.pl'), 'utf8');
// The driver's state (the preview table's files) of this test's server alone.
const STATE = mkdtempSync(path.join(os.tmpdir(), 'msc-preview-test-'));
let srv, client, browser, previewPort;

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
  const text = r.content?.[0]?.text ?? '';
  let json; try { json = JSON.parse(text); } catch { json = null; }
  return { r, text, json };
}
async function startPerl(id, port) {
  const cmd = `cat > /tmp/s.pl <<'PERL_EOF'\n${SERVER}\nPERL_EOF\n(setsid perl /tmp/s.pl ${port} ${id} >/tmp/s${port}.log 2>&1 &) ; sleep 0.3; echo started`;
  const { text } = await call('terminal_execute', { command: cmd, computer_id: id, temporary: false });
  assert.match(text, /started/, text);
}
/** Whether data holds n whole answers (heads and Content-Length bodies). */
function answered(data, n) {
  let pos = 0;
  for (let k = 0; k < n; k++) {
    const he = data.indexOf('\r\n\r\n', pos);
    if (he < 0) return false;
    const m = /content-length: *(\d+)/i.exec(data.slice(pos, he));
    pos = he + 4 + (m ? Number(m[1]) : 0);
    if (data.length < pos) return false;
  }
  return true;
}
/** Raw requests on one TCP connection: the answers, once there is one per request (or the connection
 * closed, or `wait` ms passed). */
function rawExchange(heads, { wait = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const s = net.connect(previewPort, '127.0.0.1');
    let data = '';
    const done = () => { clearTimeout(timer); s.destroy(); resolve(data); };
    const timer = setTimeout(done, wait);
    s.on('data', (d) => { data += d; if (answered(data, heads.length)) done(); });
    s.on('error', reject);
    s.on('connect', async () => {
      for (const h of heads) { s.write(h); await new Promise((r) => setTimeout(r, 300)); }
    });
    s.on('close', done);
  });
}
const capOf = (url) => new URL(url).hostname.split('.')[0];

before(async () => {
  srv = await H.startServer({ flags: ['--tools', 'ports', '--preview-listen', '127.0.0.1:0'], env: { MSC_PROXY_DIR: STATE },
    trace: process.env.MSC_TEST_TRACE === '1' });
  client = await H.connectClient(srv.mcpUrl);
  for (const id of [A, B]) {
    const { text } = await call('computer_create', { computer_id: id, temporary: false });
    assert.match(text, new RegExp(id), text);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});
after(async () => {
  await browser?.close();
  for (const id of [A, B]) await call('computer_delete', { computer_id: id }).catch(() => {});
  await client?.close();
  const alive = srv?.proc.exitCode === null && srv?.proc.signalCode === null;
  await srv?.stop();
  rmSync(STATE, { recursive: true, force: true });
  // The server lived through it, and the sanitizers (an ASan build) found nothing, at exit too.
  if (srv && (!alive || /ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: /.test(srv.stderr()))) {
    process.stderr.write(`the server died or a sanitizer spoke:\n${srv.stderr().slice(-6000)}\n`);
    process.exitCode = 1;
  }
});

test('a browser opens a page and a WebSocket through the preview URL; isolation; restart; revocation', { timeout: 240000 }, async () => {
  await startPerl(A, 8000);
  await startPerl(A, 8001);
  await startPerl(B, 8000);
  const ea = await call('computer_expose_port', { computer_id: A, port: 8000 });
  assert.ok(ea.json?.url, ea.text);
  const url = ea.json.url;
  assert.match(url, /^http:\/\/[0-9a-f]{32}\.localhost:\d+\/$/);
  previewPort = Number(new URL(url).port);
  const again = await call('computer_expose_port', { computer_id: A, port: 8000 });
  assert.equal(again.json.url, url, 'the same URL again');
  const eb = await call('computer_expose_port', { computer_id: B, port: 8000 });
  const urlB = eb.json.url;

  // The browser: the page, and a WebSocket echo.
  const page = await browser.newPage();
  // *.localhost goes to loopback in Chromium itself.
  await page.goto(url + 'index.html');
  assert.match(await page.textContent('#t'), new RegExp(`hello from ${A} port 8000 path /index.html`));
  const echo = await page.evaluate((u) => new Promise((res, rej) => {
    const ws = new WebSocket(u.replace('http:', 'ws:') + 'ws');
    ws.onopen = () => ws.send('ping 1');
    ws.onmessage = (e) => { res(e.data); ws.close(); };
    ws.onerror = () => rej(new Error('websocket error'));
    setTimeout(() => rej(new Error('websocket timeout')), 10000);
  }), url);
  assert.equal(echo, 'echo:ping 1');

  // Each request of a kept-alive connection goes by its own Host.
  const hA = new URL(url).host, hB = new URL(urlB).host;
  const other = `${'0'.repeat(32)}.localhost:${previewPort}`;
  const out = await rawExchange([
    `GET /1 HTTP/1.1\r\nHost: ${hA}\r\n\r\n`,
    `GET /2 HTTP/1.1\r\nHost: ${hB}\r\n\r\n`,
    `GET /3 HTTP/1.1\r\nHost: ${other}\r\n\r\n`,
  ]);
  assert.match(out, new RegExp(`hello from ${A} port 8000 path /1`));
  assert.match(out, /\r\nReferrer-Policy: no-referrer\r\n/, 'the URL (a capability) is never sent on as a Referer');
  assert.match(out, new RegExp(`hello from ${B} port 8000 path /2`));
  assert.match(out, /404 Not Found[\s\S]*No such preview/);
  assert.ok(!out.includes('path /3'));
  // The MCP endpoint's names and the port of the URL changed: not routed.
  for (const host of [`127.0.0.1:${srv.port}`, `localhost:${previewPort}`, `127.0.0.1:${previewPort}`, `${capOf(url)}.localhost.evil:${previewPort}`]) {
    const o = await rawExchange([`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`]);
    assert.match(o, /^HTTP\/1\.1 404/, host);
  }
  // The other port (8001) of A is never reached through A's URL, whatever the Host's port says.
  const o8001 = await rawExchange([`GET /x HTTP/1.1\r\nHost: ${capOf(url)}.localhost:8001\r\n\r\n`]);
  assert.match(o8001, /port 8000 path \/x/);
  // Smuggling: the MCP listener's rules.
  for (const bad of [
    `POST / HTTP/1.1\r\nHost: ${hA}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    `POST / HTTP/1.1\r\nHost: ${hA}\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcd`,
    `GET / HTTP/1.1\r\nHost: ${hA}\r\nHost: ${hB}\r\n\r\n`,
    `GET / HTTP/1.1\r\nHost: ${hA}\r\nX: a\r\n b\r\n\r\n`,
    `POST / HTTP/1.1\r\nHost: ${hA}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n`,
    `GET / HTTP/1.1\nHost: ${hA}\n\n`,
  ]) {
    const o = await rawExchange([bad]);
    assert.match(o, /^HTTP\/1\.1 400/, JSON.stringify(bad));
    assert.ok(!o.includes('hello from'), JSON.stringify(bad));
  }
  // A body of Content-Length bytes, then the next request on the connection.
  const ob = await rawExchange([`POST /p HTTP/1.1\r\nHost: ${hA}\r\nContent-Length: 5\r\n\r\nGET /`, `GET /after HTTP/1.1\r\nHost: ${hB}\r\n\r\n`]);
  assert.match(ob, new RegExp(`hello from ${B} port 8000 path /after`));
  // Smuggling: the rest of a body the computer answered without reading is not a next request.
  const sm = await rawExchange([`POST /early HTTP/1.1\r\nHost: ${hA}\r\nContent-Length: 60\r\n\r\n`,
    `GET /smuggled HTTP/1.1\r\nHost: ${hB}\r\n\r\n`]);
  assert.match(sm, /path \/early/);
  assert.ok(!sm.includes('path /smuggled'), sm);
  // The computer's answers framed strictly (queue poisoning): nothing past Content-Length or after
  // HEAD's head, 502 for two Content-Lengths or a 101 nobody asked for, no keep-alive after chunked.
  for (const [req, want, next] of [['GET /extra', /^HTTP\/1\.1 200[^]*?\r\n\r\nhello/, true], ['HEAD /extra', /^HTTP\/1\.1 200/, true],
    ['GET /dupcl', /^HTTP\/1\.1 502/, false], ['GET /u101', /^HTTP\/1\.1 502/, false], ['GET /chunked', /^HTTP\/1\.1 200/, false]]) {
    const o = await rawExchange([`${req} HTTP/1.1\r\nHost: ${hA}\r\n\r\n`, `GET /next HTTP/1.1\r\nHost: ${hA}\r\n\r\n`]);
    assert.match(o, want, req);
    assert.ok(!o.includes('poisoned') && o.includes('path /next') === next, `${req}: ${o}`);
  }

  // Nothing listens: 502.
  const e9 = await call('computer_expose_port', { computer_id: A, port: 9 });
  // (fetch sends its own Host: raw requests name the preview's.)
  const r9 = await rawExchange([`GET / HTTP/1.1\r\nHost: ${new URL(e9.json.url).host}\r\n\r\n`]);
  assert.match(r9, /^HTTP\/1\.1 502[\s\S]*Nothing listens/);
  // Bad input.
  for (const port of [0, 65536, -1, 1.5, 'x']) {
    const { text } = await call('computer_expose_port', { computer_id: A, port });
    assert.match(text, /port/, text);
    assert.ok(!/http:\/\//.test(text), text);
  }
  const { text: nope } = await call('computer_expose_port', { computer_id: `${RUN}-none`, port: 8000 });
  assert.match(nope, /not found|error/i, nope);
  let capped = null;
  for (let p = 10000; p < 10040 && !capped; p++) {
    const { json, text } = await call('computer_expose_port', { computer_id: A, port: p });
    if (!json?.url) capped = text;
  }
  assert.match(capped ?? '', /at most 32 ports/);
  for (let p = 10000; p < 10040; p++) await call('computer_unexpose_port', { computer_id: A, port: p });

  // An endless body, and an endless WebSocket stream, to a server that never reads them: the proxy
  // pushes back (bounded buffers) and serves other requests meanwhile.
  const flood = (head, chunk) => new Promise((resolve) => {
    const s = net.connect(previewPort, '127.0.0.1');
    let done = 0, ended = false;
    s.on('error', () => {});
    s.on('connect', () => {
      s.write(head);
      const pump = () => { while (!ended && s.write(chunk, () => { done += chunk.length; })); };
      s.on('drain', pump);
      pump();
    });
    setTimeout(() => { ended = true; s.destroy(); resolve(done); }, 3000);
  });
  const body = await flood(`POST /stall HTTP/1.1\r\nHost: ${hA}\r\nContent-Length: 1000000000\r\n\r\n`, Buffer.alloc(1 << 16, 0x61));
  assert.ok(body < (48 << 20), `the proxy took ${body} bytes of a body nobody reads`);
  // masked binary frames of 65,536 bytes (client to server), after the handshake
  const frame = Buffer.concat([Buffer.from([0x82, 0xff, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4]), Buffer.alloc(1 << 16, 7)]);
  const stream = await flood(`GET /ws-stall HTTP/1.1\r\nHost: ${hA}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`, frame);
  assert.ok(stream < (48 << 20), `the proxy took ${stream} bytes of a WebSocket stream nobody reads`);
  console.log(`# taken of an unread body: ${body} bytes; of an unread WebSocket stream: ${stream} bytes`);
  assert.match(await rawExchange([`GET /busy HTTP/1.1\r\nHost: ${hB}\r\n\r\n`]), /path \/busy/);
  // A client that resets its connection while the computer has not answered: the listener does not spin
  // (POLLHUP/POLLERR of a socket not being read). CPU ticks (1/100 s) of the server and its children.
  const cpu = () => [srv.proc.pid, ...execSync(`pgrep -P ${srv.proc.pid} || true`).toString().split(/\s+/).filter(Boolean)]
    .reduce((t, pid) => { try { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return t + Number(f[11]) + Number(f[12]); } catch { return t; } }, 0);
  const rst = net.connect(previewPort, '127.0.0.1');
  await new Promise((r) => rst.on('connect', r));
  rst.write(`GET /stall HTTP/1.1\r\nHost: ${hA}\r\n\r\n`);
  await new Promise((r) => setTimeout(r, 1000));
  rst.resetAndDestroy();
  const t0 = cpu();
  await new Promise((r) => setTimeout(r, 2000));
  assert.ok(cpu() - t0 < 100, `the server used ${cpu() - t0} ticks in 2 s after a client's reset`);

  // A computer cannot reach the preview listener (nor the MCP port): not on its gateway, not on
  // its own loopback.
  const probe = await call('terminal_execute', { computer_id: A, temporary: false, command: `perl -MIO::Socket::INET -e '
    open my $r, "<", "/proc/net/route" or die; my $gw;
    while (<$r>) { my @f = split; if ($f[1] eq "00000000") { $gw = join ".", reverse map { hex } unpack "(A2)4", $f[2]; } }
    for my $h ($gw, "127.0.0.1") { for my $p (${previewPort}, ${srv.port}) {
      my $s = IO::Socket::INET->new(PeerAddr => $h, PeerPort => $p, Timeout => 2);
      print "$h:$p ", ($s ? "open" : "closed"), "\n"; } }'` });
  assert.equal((probe.json?.stdout ?? probe.text).match(/closed/g)?.length, 4, probe.text);
  assert.doesNotMatch(probe.text, /open/);

  // computer_restart: a new container process, the same URL.
  const rs = await call('computer_restart', { computer_id: A });
  assert.ok(!rs.r.isError, rs.text);
  await startPerl(A, 8000);
  await page.goto(url + 'after-restart');
  assert.match(await page.textContent('#t'), /path \/after-restart/);
  // computer_factory_reset: a new container of the same computer, the same URL.
  const fr = await call('computer_factory_reset', { computer_id: A });
  assert.ok(!fr.r.isError, fr.text);
  await startPerl(A, 8000).catch(() => startPerl(A, 8000));
  assert.match(await rawExchange([`GET /after-reset HTTP/1.1\r\nHost: ${hA}\r\n\r\n`]), /path \/after-reset/);

  // Revocation: 404, without touching the computer.
  const un = await call('computer_unexpose_port', { computer_id: A, port: 8000 });
  assert.equal(un.json?.revoked, true, un.text);
  assert.match(await rawExchange([`GET / HTTP/1.1\r\nHost: ${hA}\r\n\r\n`]), /^HTTP\/1\.1 404/);
  assert.match(await rawExchange([`GET / HTTP/1.1\r\nHost: ${hB}\r\n\r\n`]), /^HTTP\/1\.1 200/);
  // A URL does not outlive its computer: B removed behind the server's back, then made again by the
  // same name, is not reached through B's old URL.
  execSync(`${process.env.MSC_DOCKER || 'docker'} rm -f kilntainer-${B}`, { stdio: 'ignore' });
  assert.match((await call('computer_create', { computer_id: B, temporary: false })).text, new RegExp(B));
  await startPerl(B, 8000).catch(() => startPerl(B, 8000));   // (the first call may meet the old helper)
  assert.match(await rawExchange([`GET / HTTP/1.1\r\nHost: ${hB}\r\n\r\n`]), /^HTTP\/1\.1 404/);
});
