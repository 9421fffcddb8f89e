// Allowlist mode, tried from inside a computer the way an agent's code would: through the proxy
// the driver runs (squid, outside the computer) and around it. The "internet" is a network
// namespace this file makes, with an HTTP upstream (port 80), a TLS stand-in (port 443, echoes),
// a link-local listener (169.254.77.77: a refusal proves a block, not an absence) and a DNS server
// the proxy resolves through (--proxy-dns-server), whose answers this file controls (TTL 0; one
// name rebinds between a public and a link-local address). The host's end of the veth (LINK) is
// one of the host's own addresses, not a private one: a web server listens there, as a service
// on a host's public interface would. Runs as root, as CI does.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import net from 'node:net';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { startServer, cid, cleanupContainers, run, waitFor, docker, containerName, MSC_BIN } from './lib.mjs';

const NS = `msc-np-${randomBytes(3).toString('hex')}`;
const VETH = `vp${randomBytes(3).toString('hex')}`;
const UP = '198.51.100.31';   // TEST-NET-2: the upstream web server
const DNS = '198.51.100.53';  // the test's resolver
const LINKLOCAL = '169.254.77.77';
const LINK = '192.0.2.129'; // the host's end of the veth
const LATE = '203.0.113.77'; // TEST-NET-3: an address the host gains after the proxy started

const NAMES = {
  'allowed.test': UP,
  'other.test': UP,
  'sub.wild.test': UP,
  'deep.sub.wild.test': UP,
  'wild.test': UP,
  'bad.wild.test': UP,
  'meta.wild.test': LINKLOCAL,
  'loop.wild.test': '127.0.0.1',
  'host.wild.test': LINK,
  'late.wild.test': LATE,
};
let rebinds = 0; // rebind.wild.test: public, then link-local, alternately
const seen = []; // every name the resolver was asked
const hdrs = []; // "HOST X-API-KEY" for each request the web server got
const SECRET = `msc-secret-${randomBytes(8).toString('hex')}`;

/** A minimal DNS responder (A records, TTL 0) for the namespace, in a child node process. */
const dnsScript = `
const dgram = require('dgram');
const names = ${JSON.stringify(NAMES)};
let n = 0;
const s = dgram.createSocket('udp4');
s.on('message', (m, r) => {
  let o = 12; const labels = [];
  while (m[o]) { labels.push(m.slice(o + 1, o + 1 + m[o]).toString()); o += m[o] + 1; }
  const name = labels.join('.').toLowerCase(); const qend = o + 5;
  process.stdout.write(name + '\\n');
  let ip = names[name];
  if (name === 'rebind.wild.test') ip = (n++ % 2 === 0) ? '${UP}' : '${LINKLOCAL}';
  if (name === 'hostrebind.wild.test') ip = (n++ % 2 === 0) ? '${UP}' : '${LINK}';
  const qtype = m.readUInt16BE(o + 1);
  const head = Buffer.from(m.slice(0, qend)); head[2] = 0x81; head[3] = ip ? 0x80 : 0x83;
  head.writeUInt16BE(0, 8); head.writeUInt16BE(0, 10);
  if (!ip || qtype !== 1) { head.writeUInt16BE(0, 6); if (ip) head[3] = 0x80; s.send(head, r.port, r.address); return; }
  head.writeUInt16BE(1, 6);
  const ans = Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, ...ip.split('.').map(Number)]);
  s.send(Buffer.concat([head, ans]), r.port, r.address);
});
s.bind(53, '${DNS}');
const net = require('net'), http = require('http');
http.createServer((q, a) => {
  process.stdout.write('HDR ' + q.headers.host + ' ' + (q.headers['x-api-key'] || '-') + '\\n');
  a.end('hello ' + q.headers.host + '\\n');
}).listen(80, '${UP}');
net.createServer((c) => c.on('data', (d) => c.write('echo:' + d))).listen(443, '${UP}');
net.createServer((c) => c.end('hi-linklocal\\n')).listen(80, '${LINKLOCAL}');
setTimeout(() => process.exit(0), 300000);
`;

let s;
let nsProc;
let lateAdded = false;
const hostServers = []; // the host's own web servers (LINK, LATE): never reached from a computer
const a = cid('np-a');
const FLAGS = ['--timeout', '30', '--network-allow', 'allowed.test,*.wild.test',
  '--network-deny', 'bad.wild.test', '--proxy-dns-server', DNS,
  '--proxy-credential', 'allowed.test=X-Api-Key:MSC_TEST_API_KEY'];
const OPTS = { env: { ENABLE_LIFECYCLE_TOOLS: 'true', MSC_TEST_API_KEY: SECRET } };
const DEFAULTS = 'allowlist: allowed.test, *.wild.test; deny: bad.wild.test';

/** A web server of the host itself on addr (80 and 443), answering 'hi-host'. */
async function hostServer(addr) {
  for (const port of [80, 443]) {
    const srv = net.createServer((c) => c.end('hi-host\n'));
    await new Promise((resolve, reject) => srv.once('error', reject).listen(port, addr, resolve));
    hostServers.push(srv);
  }
}

async function ip(args) {
  const r = await run('ip', args);
  assert.equal(r.code, 0, `ip ${args.join(' ')}: ${r.stderr}`);
}

/** What the host gets from host:port (first bytes), or null. */
function readFrom(host, port, send = '') {
  return new Promise((resolve) => {
    const c = net.connect({ host, port, timeout: 1500 });
    let buf = '';
    c.on('connect', () => { if (send) c.write(send); });
    c.on('data', (d) => { buf += d; if (buf.includes('\n')) { c.destroy(); resolve(buf); } });
    c.on('timeout', () => { c.destroy(); resolve(buf || null); });
    c.on('error', () => resolve(null));
    c.on('end', () => resolve(buf || null));
  });
}

// Inside the computer: raw bytes to the proxy named by $http_proxy (bash only: the image has
// neither curl nor wget), printing what comes back.
const viaProxy = (raw, tail = '') =>
  `u=\${http_proxy#http://}; h=\${u%:*}; p=\${u##*:}; exec 3<>/dev/tcp/$h/$p || { echo noproxy; exit 0; }; `
  + `printf '${raw}' >&3; ${tail} timeout 4 cat <&3; true`;
const get = (host, { path = '/', port = '' } = {}) =>
  viaProxy(`GET http://${host}${port}${path} HTTP/1.1\\r\\nHost: ${host}\\r\\nConnection: close\\r\\n\\r\\n`);
const connect = (host, port) =>
  viaProxy(`CONNECT ${host}:${port} HTTP/1.1\\r\\nHost: ${host}:${port}\\r\\n\\r\\n`,
    `sleep 0.5; printf 'ping\\n' >&3;`);

/** SYNs the proxy sent with its mark, by the policy table's counter. */
async function markedConnects() {
  const r = await run('nft', ['list', 'chain', 'inet', 'kilntainers_policy', 'output']);
  const m = /tcp flags syn counter packets (\d+)/.exec(r.stdout);
  return m ? Number(m[1]) : 0;
}

const sh = async (command) => (await s.exec({ computer_id: a, temporary: true, command, timeout: 20 })).stdout;

before(async () => {
  assert.equal(process.getuid(), 0, 'run as root, as CI does');
  await ip(['netns', 'add', NS]);
  await ip(['link', 'add', VETH, 'type', 'veth', 'peer', 'name', `${VETH}n`]);
  await ip(['link', 'set', `${VETH}n`, 'netns', NS]);
  await ip(['addr', 'add', `${LINK}/30`, 'dev', VETH]);
  await ip(['link', 'set', VETH, 'up']);
  for (const addr of ['192.0.2.130/30', `${UP}/32`, `${DNS}/32`, `${LINKLOCAL}/32`]) {
    await ip(['-n', NS, 'addr', 'add', addr, 'dev', `${VETH}n`]);
  }
  await ip(['-n', NS, 'link', 'set', `${VETH}n`, 'up']);
  await ip(['-n', NS, 'link', 'set', 'lo', 'up']);
  await ip(['-n', NS, 'route', 'add', 'default', 'via', LINK]);
  for (const addr of [UP, DNS, LINKLOCAL]) await ip(['route', 'replace', `${addr}/32`, 'dev', VETH]);
  nsProc = spawn('ip', ['netns', 'exec', NS, process.execPath, '-e', dnsScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  nsProc.stdout.on('data', (d) => {
    for (const l of String(d).split('\n').filter(Boolean)) (l.startsWith('HDR ') ? hdrs : seen).push(l.replace(/^HDR /, ''));
  });
  // The upstreams answer the host itself: a refusal inside is the policy's doing.
  assert.ok(await waitFor(async () => (await readFrom(LINKLOCAL, 80)) === 'hi-linklocal\n', { timeoutMs: 10000 }));
  assert.match(await readFrom(UP, 80, 'GET / HTTP/1.0\r\nHost: x\r\n\r\n'), /200 OK/);
  await hostServer(LINK);
  assert.equal(await readFrom(LINK, 80), 'hi-host\n');
  s = await startServer(FLAGS, OPTS);
});

after(async () => {
  await s?.close();
  await cleanupContainers();
  nsProc?.kill('SIGKILL');
  for (const srv of hostServers) srv.close();
  if (lateAdded) await run('ip', ['addr', 'del', `${LATE}/32`, 'dev', VETH]);
  for (const addr of [UP, DNS, LINKLOCAL]) await run('ip', ['route', 'del', `${addr}/32`, 'dev', VETH]);
  await run('ip', ['link', 'del', VETH]);
  await run('ip', ['netns', 'del', NS]);
});

describe('allowlist mode', () => {
  it('an allowed name answers through the proxy, over HTTP and CONNECT', async () => {
    const env = await sh('echo $http_proxy $HTTPS_PROXY');
    assert.match(env, /^http:\/\/[0-9.]+:\d+ http:\/\/[0-9.]+:\d+\n$/);
    const before = await markedConnects();
    assert.match(await sh(get('allowed.test')), /200 OK[\s\S]*hello allowed\.test\n/);
    // squid marks its connections out, so the kernel checks the address each really goes to.
    assert.ok(await markedConnects() > before, 'the proxy\'s connection out carries the mark');
    const c = await sh(connect('allowed.test', 443));
    assert.match(c, /^HTTP\/1\.1 200[\s\S]*echo:ping/);
  });

  it('wildcards cover names below, not the name itself; deny entries win', async () => {
    assert.match(await sh(get('sub.wild.test')), /hello sub\.wild\.test/);
    assert.match(await sh(get('deep.sub.wild.test')), /hello deep\.sub\.wild\.test/);
    const top = await sh(get('wild.test'));
    // Plain text, as written: not quoted for HTML (wt1&#39;s).
    assert.match(top, /403[\s\S]*\r\n\r\nRefused by the network policy: wild\.test is not on computer (\S+)'s network policy allowlist\n/);
    assert.equal(/computer (\S+)'s network/.exec(top)[1], a);
    assert.doesNotMatch(top, /&#/);
    assert.match(await sh(get('bad.wild.test')), /403[\s\S]*deny list \(bad\.wild\.test\)/);
  });

  it('other names, IP literals, trailing dots, other ports are refused with the policy named', async () => {
    const other = await sh(get('other.test'));
    assert.match(other, /^HTTP\/1\.1 403[\s\S]*Refused by the network policy: other\.test is not on/);
    assert.doesNotMatch(other, /hello/);
    assert.match(await sh(get(UP)), /403[\s\S]*not a domain name/);
    // squid reads a trailing dot as the name itself: a denied name stays denied.
    assert.match(await sh(get('bad.wild.test.')), /403[\s\S]*deny list/);
    assert.match(await sh(get('other.test.')), /403[\s\S]*not on/);
    assert.match(await sh(connect('allowed.test', 8443)), /403[\s\S]*port 80 and CONNECT \(HTTPS\) on port\s+443 only/);
    assert.match(await sh(get('allowed.test', { port: ':8080' })), /403[\s\S]*port 80 and CONNECT/);
    assert.match(await sh(connect(UP, 443)), /403[\s\S]*not a domain name/);
  });

  it('a request smuggled behind an allowed one on the same connection is checked on its own', async () => {
    const out = await sh(viaProxy('GET http://allowed.test/ HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\n'
      + 'GET http://other.test/ HTTP/1.1\\r\\nHost: other.test\\r\\nConnection: close\\r\\n\\r\\n'));
    assert.match(out, /hello allowed\.test/);
    assert.match(out, /403[\s\S]*other\.test is not on/);
    assert.doesNotMatch(out, /hello other\.test/);
  });

  it('allowed names that resolve to link-local or loopback addresses are refused, rebinding too', async () => {
    const meta = await sh(get('meta.wild.test'));
    assert.match(meta, /403[\s\S]*private, loopback, link-local or metadata/);
    assert.doesNotMatch(meta, /hi-linklocal/);
    assert.match(await sh(get('loop.wild.test')), /403/);
    // TTL 0, answers alternate: whatever the proxy resolves when it checks and when it connects,
    // the link-local listener is never what answers.
    const out = await sh(Array.from({ length: 6 }, () => get('rebind.wild.test')).join('; echo; '));
    assert.doesNotMatch(out, /hi-linklocal/);
    assert.match(out, /hello rebind\.wild\.test/);
  });

  it('names that resolve to the host\'s own addresses reach nothing on it: at check and at connect', async () => {
    const h = await sh(get('host.wild.test'));
    assert.match(h, /^HTTP\/1\.1 403[\s\S]*host\.wild\.test resolves to an address of the host/);
    assert.doesNotMatch(h, /hi-host/);
    assert.doesNotMatch(await sh(connect('host.wild.test', 443)), /hi-host/);
    // An address the host gains after the proxy started: not in squid's list, refused by the
    // kernel at the proxy's connect, as every address of the host is.
    await ip(['addr', 'add', `${LATE}/32`, 'dev', VETH]);
    lateAdded = true;
    await hostServer(LATE);
    assert.equal(await readFrom(LATE, 80), 'hi-host\n');
    const late = await sh(get('late.wild.test'));
    assert.match(late, /^HTTP\/1\.1 (403|503)/);
    assert.doesNotMatch(late, /hi-host/);
    assert.doesNotMatch(await sh(connect('late.wild.test', 443)), /hi-host/);
    // TTL 0, answers alternate between a public address and the host's.
    const out = await sh(Array.from({ length: 6 }, () => get('hostrebind.wild.test')).join('; echo; '));
    assert.doesNotMatch(out, /hi-host/);
    assert.match(out, /hello hostrebind\.wild\.test/);
  });

  it('the proxy starts without squid warnings about its address list', async () => {
    const m = /decision log (\S+)\/decisions\.log\)/.exec(s.stderr());
    assert.ok(m, s.stderr().slice(-3000));
    const logs = s.stderr() + readFileSync(`${m[1]}/cache.log`, 'utf8');
    assert.doesNotMatch(logs, /is ignored to keep splay tree|is a subnetwork of/);
  });

  it('nothing leaves the computer but through the proxy: no direct connection, no DNS', async () => {
    const direct = await sh(`timeout 4 bash -c 'exec 3<>/dev/tcp/${UP}/80 && echo open' 2>/dev/null || echo blocked`);
    assert.equal(direct, 'blocked\n');
    // A DNS query for inside-probe.test straight to the resolver (bash /dev/udp), and through
    // the engine's resolver: the resolver never hears either, though it hears the host's.
    const q = '\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x0cinside-probe\\x04test\\x00\\x00\\x01\\x00\\x01';
    await sh(`for i in 1 2 3; do printf '${q}' > /dev/udp/${DNS}/53; done; timeout 3 getent hosts inside-probe.test; true`);
    const sock = dgram.createSocket('udp4');
    const hostProbe = Buffer.from([0x43, 0x21, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, ...Buffer.from('host-probe'), 4, ...Buffer.from('test'), 0, 0, 1, 0, 1]);
    await new Promise((r) => sock.send(hostProbe, 53, DNS, r));
    assert.ok(await waitFor(() => seen.includes('host-probe.test'), { timeoutMs: 5000 }), 'the resolver hears the host');
    sock.close();
    assert.ok(!seen.includes('inside-probe.test'), 'the resolver never heard the computer');
  });

  it('each decision is logged with the computer, and the log shows no secrets', async () => {
    const m = /network: the allowlist proxy listens on \S+ \(squid pid \d+; decision log (\S+)\)/.exec(s.stderr());
    assert.ok(m, s.stderr().slice(-3000));
    assert.ok(existsSync(m[1]));
    const log = readFileSync(m[1], 'utf8');
    assert.match(log, new RegExp(`${a}:allowed:allowed\\.test GET http://allowed\\.test/`));
    assert.match(log, new RegExp(`${a}:refused:not-allowed GET http://other\\.test/ 403`));
  });

  it('computer_list shows each computer\'s policy', async () => {
    const r = await s.client.callTool({ name: 'computer_list', arguments: {} });
    const row = r.structuredContent.computers.find((c) => c.computer_id === a);
    assert.equal(row?.network, 'allowlist: allowed.test, *.wild.test; deny: bad.wild.test');
  });

  it('network ID shows the lists in effect, the server\'s defaults included', async () => {
    const r = await run(MSC_BIN, ['network', a]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${a}: ${DEFAULTS}\n`);
  });

  it('a changed policy takes effect on the next connection, without restarting the computer', async () => {
    const boot = await sh('cut -d" " -f22 /proc/1/stat');
    let r = await run(MSC_BIN, ['network', a, 'allowlist', '--network-allow', 'other.test']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${a}: allowlist: other.test\n`);
    assert.match(await sh(get('other.test')), /hello other\.test/);
    assert.match(await sh(get('allowed.test')), /403[\s\S]*allowed\.test is not on/);
    r = await run(MSC_BIN, ['network', a, 'none']);
    assert.equal(r.code, 0, r.stderr);
    const probe = `u=\${http_proxy#http://}; timeout 3 bash -c "exec 3<>/dev/tcp/\${u%:*}/\${u##*:}" 2>/dev/null && echo open || echo blocked`;
    assert.equal(await sh(probe), 'blocked\n', 'none: not even the proxy');
    const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
    assert.equal(list.structuredContent.computers.find((c) => c.computer_id === a)?.network, 'none');
    r = await run(MSC_BIN, ['network', a, 'allowlist', '--network-allow', 'allowed.test,*.wild.test']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(await sh(get('allowed.test')), /hello allowed\.test/);
    assert.equal(await sh('cut -d" " -f22 /proc/1/stat'), boot, 'the same computer, never restarted');
    r = await run(MSC_BIN, ['network', a, 'sideways']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /the mode is none, allowlist or open, got: sideways/);
  });

  it('a computer switched to open or none has no proxy variables naming a proxy it cannot reach', async () => {
    let r = await run(MSC_BIN, ['network', a, 'open']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await sh('echo "[$http_proxy|$https_proxy|$HTTP_PROXY|$HTTPS_PROXY]"'), '[|||]\n');
    const direct = `timeout 4 bash -c 'exec 3<>/dev/tcp/${UP}/80 && printf "GET / HTTP/1.0\\r\\nHost: up\\r\\n\\r\\n" >&3 && timeout 3 cat <&3' 2>/dev/null | head -1`;
    assert.match(await sh(direct), /200 OK/);
    r = await run(MSC_BIN, ['network', a, 'none']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await sh('echo "[$http_proxy]"'), '[]\n');
    r = await run(MSC_BIN, ['network', a, 'allowlist', '--network-allow', 'allowed.test,*.wild.test']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(await sh('echo $http_proxy'), /^http:\/\/[0-9.]+:\d+\n$/);
    assert.match(await sh(get('allowed.test')), /hello allowed\.test/);
  });

  it('the operator reads the decision log with network-log', async () => {
    const r = await run(MSC_BIN, ['network-log', a]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`${a}:allowed:other\\.test GET http://other\\.test/ 200`));
    assert.match(r.stdout, new RegExp(`${a}:refused:not-allowed GET http://allowed\\.test/ 403`));
    for (const line of r.stdout.trim().split('\n')) assert.ok(line.includes(` ${a}:`), line);
  });

  it('the proxy adds the credential for its domain over HTTP; the value never enters the computer', async () => {
    hdrs.length = 0;
    assert.match(await sh(get('allowed.test')), /hello allowed\.test/);
    // A header of that name the computer sends itself is replaced, not passed on.
    await sh(viaProxy('GET http://allowed.test/ HTTP/1.1\\r\\nHost: allowed.test\\r\\nX-Api-Key: forged\\r\\nConnection: close\\r\\n\\r\\n'));
    assert.match(await sh(get('sub.wild.test')), /hello sub\.wild\.test/);
    assert.deepEqual(hdrs, [`allowed.test ${SECRET}`, `allowed.test ${SECRET}`, 'sub.wild.test -']);
    // Nowhere in the computer: environment, any process's, files.
    const probe = SECRET.slice(0, 11) + '[' + SECRET[11] + ']' + SECRET.slice(12);
    const inside = await sh(`env | grep -c '${probe}'; grep -rlsE '${probe}' /proc/[0-9]*/environ /etc /root /tmp /var /home /.msc 2>/dev/null | head -3; true`);
    assert.equal(inside, '0\n');
    const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
    assert.ok(!JSON.stringify(list).includes(SECRET), 'not in a reply');
    assert.ok(!s.stderr().includes(SECRET), 'not in the server log');
    const m = /decision log (\S+)\)/.exec(s.stderr());
    assert.ok(!readFileSync(m[1], 'utf8').includes(SECRET), 'not in the decision log');
  });
});

describe('computer_create sets a computer\'s policy', () => {
  const b = cid('np-b');
  const c = cid('np-c');
  const create = (args) => s.client.callTool({ name: 'computer_create', arguments: args });
  const on = async (id, command) => (await s.exec({ computer_id: id, temporary: true, command, timeout: 20 })).stdout;

  it('an allowlist of its own, and none', async () => {
    let r = await create({ computer_id: b, network: { mode: 'allowlist', allow: ['other.test'] } });
    assert.ok(!r.isError, JSON.stringify(r));
    assert.match(await on(b, get('other.test')), /hello other\.test/);
    assert.match(await on(b, get('allowed.test')), /403[\s\S]*allowed\.test is not on computer \S+ network policy allowlist/);
    r = await create({ computer_id: c, network: { mode: 'none' } });
    assert.ok(!r.isError, JSON.stringify(r));
    const probe = `timeout 3 bash -c 'exec 3<>/dev/tcp/${UP}/80' 2>/dev/null && echo open || echo blocked`;
    assert.equal(await on(c, probe), 'blocked\n');
    const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
    const net = Object.fromEntries(list.structuredContent.computers.map((x) => [x.computer_id, x.network]));
    assert.equal(net[b], 'allowlist: other.test');
    assert.equal(net[c], 'none');
  });

  it('a bad policy is refused with the reason, and nothing is made', async () => {
    const cases = [
      [{ mode: 'sideways' }, /network\.mode must be none, allowlist or open/],
      [{ mode: 'allowlist', allow: ['169.254.169.254'] }, /network\.allow: '169\.254\.169\.254' is not a domain name/],
      [{ mode: 'open', deny: ['x.example'] }, /network\.allow and network\.deny need mode allowlist/],
      [{ allow: ['x.example'] }, /network\.mode: Field required/],
      [{ mode: 'allowlist', allow: [7] }, /network\.allow: Input should be a valid list of strings/],
    ];
    for (const [network, re] of cases) {
      const id = cid(`np-bad${randomBytes(2).toString('hex')}`);
      const r = await create({ computer_id: id, network });
      assert.ok(r.isError, JSON.stringify(r));
      assert.match(JSON.stringify(r.content), re);
      const list = await s.client.callTool({ name: 'computer_list', arguments: {} });
      assert.ok(!list.structuredContent.computers.some((x) => x.computer_id === id));
    }
  });
});

describe('bad policy flags are refused at start, never run open', () => {
  const cases = [
    [['--backend', 'fly', '--fly-app', 'x', '--network-allow', 'a.example'], /need the docker or a cloud backend: Fly Machines have no egress filter/],
    [['--backend', 'e2b', '--e2b-api-key', 'k', '--network-allow', 'a.example', '--network-deny', 'b.a.example'],
      /on E2B and Modal only --network-allow maps onto the provider's egress rules: deny entries cannot narrow it/],
    [['--backend', 'modal', '--network-allow', 'a.example', '--proxy-credential', 'a.example=X-K:HOME'], /no proxy to add credentials/],
    [['--backend', 'wasm', '--network-allow', 'a.example'], /these computers have no network at all/],
    [['--network-allow', '169.254.169.254'], /'169\.254\.169\.254' is not a domain name/],
    [['--network-allow', '*'], /'\*' is not a domain name/],
    [['--network-allow', 'pypi.example.'], /'pypi\.example\.' is not a domain name/],
    [['--network-allow', 'bücher.example'], /is not a domain name .*write an IDN as xn--/],
    [['--network-deny', 'a.example'], /--network-deny needs --network-allow/],
    [['--no-network', '--network-allow', 'a.example'], /need the network: drop --no-network/],
    [['--network-allow', 'a.example', '--proxy-credential', 'a.example=X-K:MSC_UNSET_VAR_X'], /MSC_UNSET_VAR_X is not set/],
    [['--network-allow', 'a.example', '--proxy-credential', 'a.example=X K:HOME'], /expected DOMAIN=HEADER:ENVVAR/],
    [['--proxy-credential', 'a.example=X-K:HOME'], /--proxy-credential needs allowlist mode/],
    [['--network-allow', 'a.example', '--proxy-dns-server', 'resolver'], /--proxy-dns-server must be an IP address/],
  ];
  for (const [args, re] of cases) {
    it(args.join(' '), async () => {
      const r = await run(MSC_BIN, args, { timeoutMs: 15000 });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
    });
  }
});

describe('a computer\'s policy lives as long as its container', () => {
  const g = cid('np-g');
  const on = async (id, command) => (await s.exec({ computer_id: id, temporary: false, command, timeout: 20 })).stdout;

  it('a container removed behind the server\'s back leaves no policy to the next one of that id', async () => {
    assert.match(await on(g, get('allowed.test')), /hello allowed\.test/);
    let r = await run(MSC_BIN, ['network', g, 'none']);
    assert.equal(r.code, 0, r.stderr);
    r = await docker(['rm', '-f', containerName(g)]);
    assert.equal(r.code, 0, r.stderr);
    // The same id made again has the server's default policy, not the removed container's.
    let out = null;
    for (let i = 0; i < 3 && out === null; i++) {
      const res = await s.call({ computer_id: g, temporary: false, command: get('allowed.test'), timeout: 20 });
      if (!res.isError) out = res.structuredContent.stdout;
    }
    assert.match(out ?? '', /hello allowed\.test/);
    r = await run(MSC_BIN, ['network', g]);
    assert.equal(r.stdout, `${g}: ${DEFAULTS}\n`);
  });
});

describe('a server restarted', () => {
  const p = cid('np-p');

  it('gives its permanent allowlist computers their proxy back at start, before any command', async () => {
    const first = await s.exec({ computer_id: p, temporary: false, command: get('allowed.test'), timeout: 20 });
    assert.match(first.stdout, /hello allowed\.test/);
    await s.close();
    s = await startServer(FLAGS, OPTS);
    // Nothing asked of the server: the computer's own programs find their proxy again.
    const applied = new RegExp(`network: computer ${p} \\(\\S+\\) is in allowlist mode`);
    assert.ok(await waitFor(() => applied.test(s.stderr()), { timeoutMs: 30000 }), s.stderr().slice(-3000));
    assert.match(s.stderr(), /the allowlist proxy listens on/);
    let out = '';
    await waitFor(async () => {
      const r = await docker(['exec', containerName(p), 'bash', '-c', get('allowed.test')]);
      out = r.stdout + r.stderr;
      return /hello allowed\.test/.test(out);
    }, { timeoutMs: 20000, intervalMs: 1000 });
    assert.match(out, /hello allowed\.test/);
  });
});
