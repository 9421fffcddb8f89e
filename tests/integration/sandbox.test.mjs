// What a computer's code can reach, tried the way an attacker would from inside a computer (as
// root, which CI is): filling the host through /.msc, the host's services on the sandbox bridge's
// gateway, another computer's listener, the cloud metadata address (169.254.169.254, served here
// from a network namespace this file makes, so a refusal proves a block and not an absence), and
// the usual container escapes (Docker socket, /proc/sys and /sys, mount, unshare, raw sockets,
// other computers' helper sockets, ptrace of the exec helper, writing the helper binary).
// Traffic goes only to this machine's own addresses and to the namespace made here. The network
// checks run twice: with the server as root, and as a user who is only in the engine socket's group
// (how Claude Code launches it), whose server has the engine load the host rules.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  startServer, cid, containerName, cleanupContainers, docker, run, waitFor, MSC_BIN, textOf, SANDBOX_TABLE, ENGINE,
  RUNTIME,
} from './lib.mjs';

const ROOT = process.env.MSC_FAST_EXEC_DIR || '/run/mcp-sandbox-computer';
const NS = `msc-sbx-${randomBytes(3).toString('hex')}`;
const VETH = `vs${randomBytes(3).toString('hex')}`;
const METADATA = '169.254.169.254';
const PUBLIC = '198.51.100.10'; // TEST-NET-2: stands for an internet host, in our namespace
const LINK = '192.0.2.1'; // TEST-NET-1: the host's end of the link to the namespace

/** Bash connects to ip:port from inside a computer; 'open' or 'refused/timeout'. */
const tryConnect = (ip, port) =>
  `timeout 4 bash -c 'exec 3<>/dev/tcp/${ip}/${port} && read -t 2 l <&3; echo "open:$l"' 2>/dev/null || echo blocked`;

let s;
let nsListener;
const a = cid('sbx-a');
const b = cid('sbx-b');
const NOBODY = 65534;
const LOADER_IMAGE = 'kilntainers-netrules:empty'; // the rule loader's empty image
let hadLoaderImage;
const SOCK = process.env.DOCKER_HOST?.startsWith('unix://') ? process.env.DOCKER_HOST.slice(7) : '/var/run/docker.sock';

/** The first line a TCP server at ip:port sends to this process, or null (1 s at most). */
function readLine(host, port) {
  return new Promise((resolve) => {
    const c = net.connect({ host, port, timeout: 1000 });
    let buf = '';
    const done = (v) => { c.destroy(); resolve(v); };
    c.on('data', (d) => { buf += d; if (buf.includes('\n')) done(buf.split('\n')[0]); });
    c.on('timeout', () => done(null));
    c.on('error', () => done(null));
    c.on('end', () => done(buf || null));
  });
}

async function ip(args) {
  const r = await run('ip', args);
  assert.equal(r.code, 0, `ip ${args.join(' ')}: ${r.stderr}`);
}

before(async () => {
  assert.equal(process.getuid(), 0, 'these attacks are tried as root, as CI runs');
  // The "neighbourhood": a namespace holding the metadata address and an internet stand-in,
  // reached from the host over a veth pair with host routes to exactly those two addresses.
  await ip(['netns', 'add', NS]);
  await ip(['link', 'add', VETH, 'type', 'veth', 'peer', 'name', `${VETH}n`]);
  await ip(['link', 'set', `${VETH}n`, 'netns', NS]);
  await ip(['addr', 'add', `${LINK}/24`, 'dev', VETH]);
  await ip(['link', 'set', VETH, 'up']);
  for (const addr of [`192.0.2.2/24`, `${METADATA}/32`, `${PUBLIC}/32`]) {
    await ip(['-n', NS, 'addr', 'add', addr, 'dev', `${VETH}n`]);
  }
  await ip(['-n', NS, 'link', 'set', `${VETH}n`, 'up']);
  await ip(['-n', NS, 'link', 'set', 'lo', 'up']);
  await ip(['route', 'replace', `${METADATA}/32`, 'dev', VETH]);
  await ip(['route', 'replace', `${PUBLIC}/32`, 'dev', VETH]);
  const script = `const net = require('net');
    for (const h of ['${METADATA}', '${PUBLIC}']) net.createServer((c) => c.end('hi-' + h + '\\n')).listen(80, h);
    setTimeout(() => process.exit(0), 300000);`;
  nsListener = spawn('ip', ['netns', 'exec', NS, process.execPath, '-e', script], { stdio: 'ignore' });
  // The listener answers from the host itself (proves the route, so a refusal inside is a block).
  const ok = await waitFor(async () => (await readLine(METADATA, 80)) === `hi-${METADATA}`,
    { timeoutMs: 10000 });
  assert.ok(ok, 'the namespace listener answers the host');
  hadLoaderImage = (await docker(['image', 'inspect', LOADER_IMAGE])).code === 0;
  s = await startServer(['--timeout', '30'], { env: { ENABLE_LIFECYCLE_TOOLS: 'true' } });
});

after(async () => {
  await s?.close();
  await cleanupContainers();
  if (hadLoaderImage === false) await docker(['rmi', LOADER_IMAGE]);
  nsListener?.kill('SIGKILL');
  await run('ip', ['route', 'del', `${METADATA}/32`, 'dev', VETH]);
  await run('ip', ['route', 'del', `${PUBLIC}/32`, 'dev', VETH]);
  await run('ip', ['link', 'del', VETH]);
  await run('ip', ['netns', 'del', NS]);
});

const sh = (id, command, extra = {}) => s.exec({ computer_id: id, temporary: true, command, ...extra });

describe('the fast exec folder cannot fill the host', () => {
  it('a 200 MB write, deep folders and links in /.msc are bounded', async () => {
    const w = await sh(a, 'head -c 200M /dev/zero > /.msc/x; echo rc=$?; du -sk /.msc | cut -f1; rm -f /.msc/x');
    assert.match(w.stdout, /^rc=1\n/, w.stdout + w.stderr);
    assert.ok(Number(w.stdout.split('\n')[1]) <= 1024, `/.msc holds ${w.stdout.split('\n')[1]} KiB`);
    const d = await sh(a, 'p=/.msc; n=0; while [ $n -lt 5000 ] && mkdir $p/d 2>/dev/null; do p=$p/d; n=$((n+1)); done; '
      + 'echo depth=$n; ln -s / /.msc/root; ln -s /etc /.msc/d/etc; echo done');
    assert.ok(Number(/depth=(\d+)/.exec(d.stdout)[1]) < 100, d.stdout);
    // The helper still answers after the filler.
    assert.equal((await sh(a, 'echo still')).stdout, 'still\n');
    assert.ok(!existsSync(`${ROOT}/${containerName(a)}`), 'no host folder for the computer');
  });

  it('a computer killed behind the driver\'s back leaves no folder on the host', async () => {
    const id = cid('sbx-kill');
    await sh(id, 'mkdir -p /.msc/a/b/c; ln -s /etc /.msc/a/etc; head -c 1M /dev/zero > /.msc/a/f; true');
    const r = await docker(['rm', '-f', containerName(id)]);
    assert.equal(r.code, 0, r.stderr);
    // The next call learns it is gone (and makes a new one with the same id).
    const res = await s.call({ computer_id: id, temporary: true, command: 'ls /.msc' });
    if (!res.isError) assert.equal(res.structuredContent.stdout, 'sock\n');
    assert.ok(!existsSync(`${ROOT}/${containerName(id)}`), 'no host folder left');
    assert.ok(existsSync('/etc/hostname'), 'links were not followed on the host');
    const left = existsSync(ROOT) ? readdirSync(ROOT).filter((n) => n.includes(id)) : [];
    assert.deepEqual(left, []);
  });

  it('an earlier build\'s host folder is removed, links not followed, once its computer is gone', async () => {
    // A computer as earlier builds made it: /.msc a host folder, which its code filled with deep
    // folders and links out; then it is killed behind the driver's back.
    const id = cid('sbx-legacy');
    const dir = `${ROOT}/${containerName(id)}`;
    const r = await docker(['run', '-d', '--name', containerName(id), '--label', 'kilntainers=true',
      '--label', `kilntainers.computer-id=${id}`, '--label', 'kilntainers.temporary=false',
      '--network', 'none', '--entrypoint', '/.msc-helper', '-v', `${ROOT}/msc-exec-helper:/.msc-helper:ro`,
      '-v', `${dir}:/.msc`, 'debian:bookworm-slim', '/.msc/sock']);
    assert.equal(r.code, 0, r.stderr);
    const fill = await docker(['exec', containerName(id), 'bash', '-c',
      'cd /.msc && for i in $(seq 300); do mkdir d && cd d && ln -s /etc etc && ln -s / root; done; echo ok']);
    assert.equal(fill.stdout, 'ok\n', fill.stderr);
    assert.ok(existsSync(`${dir}/d/d/d/etc`));
    assert.equal((await docker(['rm', '-f', containerName(id)])).code, 0);
    assert.ok(existsSync(dir), 'the folder outlives its container');
    await s.call({ computer_id: id, temporary: true, command: 'true' });
    assert.ok(!existsSync(dir), 'the folder is gone');
    assert.ok(existsSync('/etc/hostname') && existsSync(`${ROOT}/msc-exec-helper`), 'nothing outside touched');
  });
});

/**
 * From computer `ida` of server `srv`: a public address is reached; the host (a listener on A's
 * gateway), computer `idb`'s listener and the metadata address are not.
 */
async function checkReach(srv, ida, idb) {
  const run1 = (id, command, extra = {}) => srv.exec({ computer_id: id, temporary: true, command, ...extra });
  // Computer B listens on 8080 (perl is in the image); A tries everything.
  await run1(idb, `setsid perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalPort=>8080,Listen=>5,ReuseAddr=>1) or die;`
    + ` while($c=$s->accept){print $c "hi-b\\n"; close $c}' >/dev/null 2>&1 </dev/null & sleep 0.5;`
    + ` exec 3<>/dev/tcp/127.0.0.1/8080 && head -1 <&3`);
  const bAddr = (await run1(idb, "hostname -I | cut -d' ' -f1")).stdout.trim();
  assert.match(bAddr, /^\d+\.\d+\.\d+\.\d+$/);
  // A's gateway is the host's address on A's bridge: a host service listens there.
  const route = (await run1(ida, 'cat /proc/net/route')).stdout;
  const hex = route.split('\n').map((l) => l.split('\t')).find((f) => f[1] === '00000000')?.[2];
  assert.ok(hex, route);
  const gw = [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  const hostListener = net.createServer((c) => c.end('hi-host\n'));
  try {
    await new Promise((res, rej) => { hostListener.once('error', rej); hostListener.listen(0, gw, res); });
    const hostPort = hostListener.address().port;
    assert.equal(await readLine(gw, hostPort), 'hi-host', 'the host listener answers the host');
    // The four at once, each to a file of its own: a dropped connection waits out its 4 s.
    const probes = { public: [PUBLIC, 80], metadata: [METADATA, 80], host: [gw, hostPort], peer: [bAddr, 8080] };
    const r = await run1(ida, [
      'd=$(mktemp -d)',
      ...Object.entries(probes).map(([k, [ip, port]]) => `(echo ${k}=$(${tryConnect(ip, port)}) > $d/${k}) &`),
      'wait',
      `cat ${Object.keys(probes).map((k) => `$d/${k}`).join(' ')}`,
      'rm -rf $d',
    ].join('\n'), { timeout: 30 });
    const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('=')));
    assert.equal(got.public, `open:hi-${PUBLIC}`, r.stdout);
    assert.equal(got.metadata, 'blocked', r.stdout);
    assert.equal(got.host, 'blocked', r.stdout);
    assert.equal(got.peer, 'blocked', r.stdout);
  } finally {
    hostListener.close();
  }
}

/**
 * Starts the server as nobody with only the engine socket's group (how Claude Code launches it
 * for a user in the docker group), with a HOME and runtime folder of its own; stop() ends it and
 * removes the folder.
 */
async function startAsUser(flags = []) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'msc-sbx-user-'));
  chownSync(dir, NOBODY, NOBODY);
  const stop = async (srv) => {
    await srv?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const srv = await startServer(['--timeout', '30', ...flags], {
      wrap: ['setpriv', '--reuid', String(NOBODY), '--regid', String(NOBODY), '--groups', String(statSync(SOCK).gid)],
      env: { HOME: dir, XDG_RUNTIME_DIR: dir, MSC_FAST_EXEC_DIR: path.join(dir, 'fx') },
    });
    return { srv, stop: () => stop(srv) };
  } catch (e) {
    await stop(null);
    throw e;
  }
}

const loaders = async () => (await docker(['ps', '-aq', '--filter', 'label=kilntainers.netrules=true'])).stdout.trim();

describe('the sandbox network is the internet, not the host\'s neighbourhood', () => {
  it('a computer reaches a public address but not the host, another computer or the metadata address', async () => {
    await checkReach(s, a, b);
  });

  it('so it does when the server runs as a user in the engine socket\'s group: the engine loads the rules', async () => {
    // Start from no tables, so the user's server is the one that loads them.
    for (const family of ['inet', 'bridge']) await run('nft', ['delete', 'table', family, SANDBOX_TABLE]);
    const { srv: u, stop } = await startAsUser();
    try {
      await checkReach(u, cid('sbx-ua'), cid('sbx-ub'));
      assert.match(u.stderr(), /network: loaded the sandbox rules through the engine \(the driver is not root\)/);
      assert.equal(u.stderr().split('loaded the sandbox rules through the engine').length, 2, 'logged once');
      const inet = await run('nft', ['list', 'table', 'inet', SANDBOX_TABLE]);
      assert.equal(inet.code, 0, inet.stderr);
      assert.equal(await loaders(), '', 'the rule loaders are gone');
    } finally {
      await stop();
    }
  });

  it('the rule loader runs only the host\'s programs: a configured image with none changes nothing', async () => {
    // An empty image (no shell, no chroot, no ENV): the loader still loads the rules, since it
    // runs nothing from the configured image; only the computer itself cannot run.
    const img = `kt-sbx-empty-${randomBytes(3).toString('hex')}:test`;
    const imp = await docker(['import', '-', img], { input: Buffer.alloc(10240) });
    assert.equal(imp.code, 0, imp.stderr);
    let stop;
    try {
      for (const family of ['inet', 'bridge']) await run('nft', ['delete', 'table', family, SANDBOX_TABLE]);
      let u;
      ({ srv: u, stop } = await startAsUser(['--image', img]));
      const id = cid('sbx-empty');
      const res = await u.call({ computer_id: id, temporary: true, command: 'true' });
      assert.equal(res.isError, true);
      assert.doesNotMatch(textOf(res), /sandbox network is not ready/);
      assert.match(u.stderr(), /network: loaded the sandbox rules through the engine/);
      assert.equal((await run('nft', ['list', 'table', 'inet', SANDBOX_TABLE])).code, 0);
      assert.equal(await loaders(), '', 'no rule loader is left');
      assert.equal((await docker(['ps', '-aq', '--filter', `name=${containerName(id)}`])).stdout.trim(), '');
    } finally {
      await stop?.();
      await docker(['rmi', '-f', img]);
    }
  });

  it('without the means to install the host rules, the server refuses to start with networking on', async () => {
    const remote = await run(MSC_BIN, ['--docker-host', 'tcp://127.0.0.1:1'], { input: '' });
    assert.equal(remote.code, 1, remote.stderr);
    assert.match(remote.stderr, /kilntainers: error: networking is on but .*\(the engine is not local\)/);
    // Neither root nor in the socket's group: it cannot have the engine load the rules either.
    const user = await run('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', MSC_BIN],
      { input: '' });
    assert.equal(user.code, 1, user.stderr);
    assert.match(user.stderr, /\(the driver is not root and cannot use the engine's socket .*: Permission denied\).*--no-network/);
  });

  it('--no-network still means no network; the operator\'s --network is used as is', async () => {
    const s2 = await startServer(['--no-network']);
    try {
      const r = await s2.exec({ computer_id: cid('sbx-none'), temporary: true, command: 'cat /proc/net/route | wc -l' });
      assert.equal(r.stdout, '1\n');
    } finally {
      await s2.close();
    }
    const s3 = await startServer(['--docker-run-flag', '--network', '--docker-run-flag', 'bridge']);
    try {
      await s3.exec({ computer_id: cid('sbx-op'), temporary: true, command: 'true' });
      assert.match(s3.stderr(), /operator's --network bridge is used as is/);
      // The networks each is on (Podman lists every network mode as "bridge", and names its
      // default bridge network "podman").
      const nets = await docker(['inspect', '-f', '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}',
        containerName(a), containerName(cid('sbx-op'))]);
      assert.deepEqual(nets.stdout.trim().split('\n'), ['kilntainers-sandbox', ENGINE === 'podman' ? 'podman' : 'bridge']);
    } finally {
      await s3.close();
    }
  });
});

describe('container escapes are refused', () => {
  // Under gVisor (MSC_TEST_RUNTIME=runsc) two attacks take another form: its kernel makes device
  // nodes whatever the capabilities say, but they are its own (the host's disk and memory answer
  // ENXIO), so the attack is reading them; and a command comes through the engine's exec, not
  // the helper (whose socket the driver cannot reach there), so it has no helper session above
  // it to trace (its parent is outside the computer: PPID 0).
  const gvisor = RUNTIME.startsWith('runsc');
  // Each line prints NAME=ok when the attack failed, NAME=ESCAPED when it worked.
  const attacks = {
    docker_sock: 'test ! -e /var/run/docker.sock && test ! -e /run/docker.sock && ! find / -xdev -name "docker.sock*" | grep -q .',
    proc_sys: '! (echo 1 > /proc/sys/kernel/sysrq) 2>/dev/null && ! (echo 1 > /proc/sys/net/ipv4/ip_forward) 2>/dev/null',
    sysrq: '! (echo h > /proc/sysrq-trigger) 2>/dev/null',
    sys: '! (echo 1 > /sys/kernel/mm/ksm/run) 2>/dev/null && ! touch /sys/x 2>/dev/null',
    mount_tmpfs: 'mkdir -p /mnt/t && ! mount -t tmpfs none /mnt/t 2>/dev/null',
    mount_proc: 'mkdir -p /mnt/p && ! mount -t proc proc /mnt/p 2>/dev/null',
    unshare_user: '! unshare -Urm true 2>/dev/null && ! unshare -m true 2>/dev/null',
    raw_socket: "! perl -e 'use Socket; socket(my $s, PF_INET, SOCK_RAW, 1) or exit 1'",
    mknod: gvisor
      ? '! (mknod /tmp/sda b 8 0 && head -c 1 /tmp/sda) 2>/dev/null && ! (mknod /tmp/mem c 1 1 && head -c 1 /tmp/mem) 2>/dev/null'
      : '! mknod /tmp/sda b 8 0 2>/dev/null',
    helper_write: '! (echo x > /.msc-helper) 2>/dev/null && ! mount -o remount,rw /.msc-helper 2>/dev/null',
    // the helper's two: commands, and the lease (which takes renewals only from outside the
    // computer's PID namespace: tests/integration/lease.test.mjs)
    other_sockets: 'test -e /.msc/sock && test -z "$(find /.msc -type s ! -path /.msc/sock ! -path /.msc/lease)" && test ! -e /run/mcp-sandbox-computer && test "$(find / -xdev -type s | wc -l)" = 0',
    ptrace_pid1: "perl -e 'exit(syscall(101, 16, 1, 0, 0) == 0 ? 1 : 0)'",
    ptrace_session: gvisor ? 'test "$PPID" = 0'
      : "grep -q msc-helper /proc/$PPID/cmdline && perl -e 'exit(syscall(101, 16, $ARGV[0], 0, 0) == 0 ? 1 : 0)' $PPID",
    host_pids: "test \"$(echo /proc/[0-9]* | wc -w)\" -lt 20 && perl -e 'exit(syscall(101, 16, $ARGV[0], 0, 0) == 0 ? 1 : 0)' " + process.pid,
  };

  it('from inside a computer, every attack fails', async () => {
    const script = Object.entries(attacks)
      .map(([k, v]) => `if ( ${v} ); then echo ${k}=ok; else echo ${k}=ESCAPED; fi`).join('\n');
    const r = await sh(a, script, { timeout: 60 });
    const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('=')));
    for (const k of Object.keys(attacks)) assert.equal(got[k], 'ok', `${k}: ${r.stdout}\n${r.stderr}`);
    // The helper is unharmed and still PID 1.
    const who = await sh(a, 'tr "\\0" " " < /proc/1/cmdline');
    assert.match(who.stdout, /^\/\.msc-helper /);
  });
});

// Last: it removes this file's computers (the network goes only when no computer uses it).
describe('the sandbox network is the server\'s own, not one of the same name', () => {
  it('a network of that name made by someone else is refused, saying what is wrong and what to do', async (t) => {
    // This run's computers leave, and the network with them (another run's computers may hold it).
    await cleanupContainers();
    if ((await docker(['network', 'inspect', 'kilntainers-sandbox'])).code === 0) {
      t.skip('another run\'s computers use the sandbox network');
      return;
    }
    const made = await docker(['network', 'create', 'kilntainers-sandbox']);
    assert.equal(made.code, 0, made.stderr);
    const id = cid('sbx-foreign');
    try {
      const res = await s.call({ computer_id: id, temporary: true, command: 'echo ok' });
      assert.equal(res.isError, true, textOf(res));
      assert.match(textOf(res), new RegExp('network kilntainers-sandbox exists but was not made by this server: '
        + `it has no label kilntainers=true\\. Remove it \\(${ENGINE} network rm kilntainers-sandbox, once no `
        + 'container uses it\\) and the next computer makes it anew'));
      // The advice works: once it is gone, the server makes its own and the command runs.
      assert.equal((await docker(['network', 'rm', 'kilntainers-sandbox'])).code, 0);
      const ok = await s.exec({ computer_id: id, temporary: true, command: 'echo ok' });
      assert.equal(ok.stdout, 'ok\n');
    } finally {
      await cleanupContainers();
      await docker(['network', 'rm', 'kilntainers-sandbox']);
    }
  });
});
