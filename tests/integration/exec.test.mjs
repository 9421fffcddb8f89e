// terminal_execute on the Docker backend: argument validation (§2.1 step 2), reply shape,
// the Linux-container acceptance cases (§10 test_linux_container_integration), timeouts and
// output limits (with the promised fix: the command is really killed inside the container),
// UTF-8 replacement, and per-computer serialization (§9).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer, cid, containerOf, containerName, containerProcesses, cleanupContainers,
  assertReplyShape, assertToolError, textOf, waitFor, TIMEOUT_MARKER, LIMIT_MARKER,
} from './lib.mjs';

const A = cid('exec-a');       // main computer on server `a` (default limits)
const A2 = cid('exec-a2');     // second computer on server `a` (parallelism)
const B = cid('exec-b');       // computer on server `b` (--output-limit 1024 --timeout 2)
const V = cid('exec-val');     // must never be created (validation failures)
const TWO_MIB = 2 * 1024 * 1024;

let a;
let b;

before(async () => {
  // The reference's replies: the whole output up to --output-limit.
  a = await startServer(['--timeout', '30', '--reply-output-limit', '0']);
  b = await startServer(['--output-limit', '1024', '--timeout', '2']);
});

after(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await cleanupContainers();
});

const ex = (args, opts) => a.exec({ computer_id: A, ...args }, opts);
const exB = (args, opts) => b.exec({ computer_id: B, ...args }, opts);

describe('validation (no computer is created)', () => {
  const cases = [
    [{ command: 'echo x', args: ['echo', 'x'] },
      "Cannot provide both 'command' and 'args'. Use 'command' for shell commands or 'args' for direct execution."],
    [{}, "Must provide either 'command' or 'args'."],
    [{ command: '' }, "Must provide either 'command' or 'args'."],
    [{ args: [] }, "Must provide either 'command' or 'args'."],
    [{ command: '', args: [], stdin: '', working_directory: '' }, "Must provide either 'command' or 'args'."],
    [{ command: 'pwd', working_directory: 'relative/path' }, 'working_directory must be an absolute path, got: relative/path'],
    [{ command: 'true', timeout: 0 }, 'timeout must be at least 1 second.'],
    [{ command: 'true', timeout: -5 }, 'timeout must be at least 1 second.'],
    [{ command: 'cat', stdin: 'a'.repeat(TWO_MIB + 1) },
      'stdin content exceeds the 2 MiB limit (2097153 bytes). Split into smaller chunks or use a different approach.'],
    // the limit counts UTF-8 bytes, not characters: 1 048 577 × "é" = 2 097 154 bytes
    [{ command: 'cat', stdin: 'é'.repeat(TWO_MIB / 2 + 1) },
      'stdin content exceeds the 2 MiB limit (2097154 bytes). Split into smaller chunks or use a different approach.'],
    // first failure wins
    [{ command: 'x', args: ['x'], working_directory: 'rel', timeout: 0 },
      "Cannot provide both 'command' and 'args'. Use 'command' for shell commands or 'args' for direct execution."],
    [{ command: 'x', working_directory: 'rel', timeout: 0 }, 'working_directory must be an absolute path, got: rel'],
  ];
  for (const [args, msg] of cases) {
    const label = JSON.stringify(args).slice(0, 120);
    it(`${label} → ${msg.slice(0, 60)}`, async () => {
      const res = await a.call({ computer_id: V, ...args });
      assert.equal(res.isError, true, JSON.stringify(res).slice(0, 300));
      assert.equal(textOf(res), msg);
      assert.equal(res.structuredContent, undefined, 'no structuredContent on validation errors');
    });
  }

  it('no container was created for the validation failures', async () => {
    assert.equal(await containerOf(V), null);
  });
});

describe('reply shape and basic execution', () => {
  it('echo hello world: exit 0, exact stdout, stderr "", six keys, text block = structuredContent', async () => {
    const res = await a.call({ computer_id: A, command: 'echo hello world' });
    const sc = assertReplyShape(res);
    assert.equal(sc.computer_id, A);
    assert.equal(sc.temporary, true);
    assert.equal(sc.stdout, 'hello world\n');
    assert.equal(sc.stderr, '');
    assert.equal(sc.exit_code, 0);
  });

  it('the container exists with the promised name and labels', async () => {
    const c = await containerOf(A);
    assert.ok(c, `container ${containerName(A)} exists`);
    assert.equal(c.Name, `/${containerName(A)}`);
    assert.equal(c.State.Running, true);
    const l = c.Config.Labels;
    assert.equal(l['kilntainers'], 'true');
    assert.equal(l['kilntainers.computer-id'], A);
    assert.equal(l['kilntainers.temporary'], 'true');
    assert.equal(l['kilntainers.image'], 'debian:bookworm-slim');
  });

  it('false → exit 1 is a normal result', async () => {
    const res = await a.call({ computer_id: A, command: 'false' });
    const sc = assertReplyShape(res);
    assert.equal(res.isError ?? false, false);
    assert.equal(sc.exit_code, 1);
  });

  it('exit 42 passes through', async () => {
    assert.equal((await ex({ command: 'exit 42' })).exit_code, 42);
  });

  it('unknown command → 127 and "not found" on stderr', async () => {
    const sc = await ex({ command: 'no_such_command_xyz' });
    assert.equal(sc.exit_code, 127);
    assert.match(sc.stderr, /not found/);
  });

  it('ls /nonexistent → non-zero and "No such file"', async () => {
    const sc = await ex({ command: 'ls /nonexistent' });
    assert.notEqual(sc.exit_code, 0);
    assert.match(sc.stderr, /No such file/);
  });

  it('pipes work in command mode', async () => {
    assert.equal((await ex({ command: 'echo hello | tr a-z A-Z' })).stdout, 'HELLO\n');
  });

  it('args are passed literally (no shell)', async () => {
    const sc = await ex({ args: ['echo', 'hello | tr a-z A-Z'] });
    assert.equal(sc.stdout, 'hello | tr a-z A-Z\n');
    assert.equal(sc.exit_code, 0);
  });

  it('args with spaces, quotes and $ survive', async () => {
    const sc = await ex({ args: ['printf', '%s|', 'a b', "it's", '$HOME', '"q"'] });
    assert.equal(sc.stdout, 'a b|it\'s|$HOME|"q"|');
  });

  it('args: a missing binary is a non-zero result, not a tool error', async () => {
    const res = await a.call({ computer_id: A, args: ['/no/such/binary'] });
    const sc = assertReplyShape(res);
    assert.notEqual(sc.exit_code, 0);
  });

  it('working_directory /tmp → pwd', async () => {
    assert.equal((await ex({ command: 'pwd', working_directory: '/tmp' })).stdout, '/tmp\n');
  });

  it('working_directory /etc → pwd && ls', async () => {
    const sc = await ex({ command: 'pwd && ls', working_directory: '/etc' });
    assert.ok(sc.stdout.startsWith('/etc\n'), sc.stdout);
    assert.match(sc.stdout, /\bpasswd\b/);
  });

  it('working_directory with args mode', async () => {
    assert.equal((await ex({ args: ['pwd'], working_directory: '/usr' })).stdout, '/usr\n');
  });

  it('working_directory "" is treated as absent', async () => {
    const sc = await ex({ command: 'pwd', working_directory: '' });
    assert.equal(sc.exit_code, 0);
    assert.match(sc.stdout, /^\/.*\n$/);
  });

  it('stdin round trip', async () => {
    assert.equal((await ex({ command: 'cat', stdin: 'hello from stdin' })).stdout, 'hello from stdin');
    assert.equal((await ex({ command: 'cat', stdin: 'Hello\nWorld\t!' })).stdout, 'Hello\nWorld\t!');
  });

  it('stdin with args mode', async () => {
    assert.equal((await ex({ args: ['tr', 'a-z', 'A-Z'], stdin: 'abc' })).stdout, 'ABC');
  });

  it('absent stdin is EOF (cat returns at once)', async () => {
    const t0 = Date.now();
    const sc = await ex({ command: 'cat', timeout: 10 });
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout, '');
    assert.ok(Date.now() - t0 < 5000, 'cat did not wait for input');
  });

  it('stdin "" is treated as absent', async () => {
    const sc = await ex({ command: 'cat', stdin: '', timeout: 10 });
    assert.equal(sc.stdout, '');
    assert.equal(sc.exit_code, 0);
  });

  it('file written through stdin reads back exactly', async () => {
    const content = 'line one\nline "two" with $vars and `ticks`\n\ttabbed\nunicode: héllo ✓ 😀\n';
    const w = await ex({ command: 'cat > /tmp/e2e_content', stdin: content });
    assert.equal(w.exit_code, 0);
    const r = await ex({ command: 'cat /tmp/e2e_content' });
    assert.equal(r.stdout, content);
  });

  it('stdin of exactly 2 MiB is accepted and delivered whole', async () => {
    const sc = await ex({ command: 'wc -c', stdin: 'x'.repeat(TWO_MIB) }, { timeoutMs: 60000 });
    assert.equal(sc.stdout.trim(), String(TWO_MIB));
  });

  it('mkdir then ls -d (filesystem persists between calls)', async () => {
    assert.equal((await ex({ command: 'mkdir -p /tmp/e2e_dir/sub' })).exit_code, 0);
    const sc = await ex({ command: 'ls -d /tmp/e2e_dir/sub' });
    assert.equal(sc.stdout, '/tmp/e2e_dir/sub\n');
  });

  it('export and cd do not persist between calls', async () => {
    await ex({ command: 'export KT_TEST_VAR=persisted; cd /usr' });
    const sc = await ex({ command: 'echo "[$KT_TEST_VAR]"; pwd' });
    assert.ok(sc.stdout.startsWith('[]\n'), sc.stdout);
    assert.notEqual(sc.stdout, '[]\n/usr\n');
  });

  it('commands run in /bin/bash by default', async () => {
    assert.equal((await ex({ command: 'echo $BASH_VERSION | cut -c1' })).stdout.trim().length, 1);
  });

  it('stdout and stderr are kept apart', async () => {
    const sc = await ex({ command: 'echo out; echo err >&2; exit 3' });
    assert.equal(sc.stdout, 'out\n');
    assert.equal(sc.stderr, 'err\n');
    assert.equal(sc.exit_code, 3);
  });

  it('2 MiB of output (the default limit, equal passes) comes back whole', async () => {
    const sc = await ex({ command: `head -c ${TWO_MIB} /dev/zero | tr '\\0' a` }, { timeoutMs: 60000 });
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout.length, TWO_MIB);
  });

  it('2 MiB + 1 bytes of output exceeds the default limit', async () => {
    const sc = await ex({ command: `head -c ${TWO_MIB + 1} /dev/zero | tr '\\0' a` }, { timeoutMs: 60000 });
    assert.equal(sc.exit_code, 1);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, LIMIT_MARKER(TWO_MIB));
  });
});

describe('reference compatibility of the reply text (§2.1 step 6)', () => {
  // Python json.dumps: ", " and ": " separators, non-ASCII escaped as \uXXXX (surrogate pairs).
  const pyDumps = (o) => '{' + Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ') + '}';
  const asciiEscape = (t) => t.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

  it('text block is Python json.dumps of structuredContent (separators, key order, ASCII escapes)', async () => {
    const res = await a.call({ computer_id: A, command: 'cat', stdin: 'hé 😀 "q" \\ tab\t\u001b' });
    const sc = assertReplyShape(res);
    assert.equal(sc.stdout, 'hé 😀 "q" \\ tab\t\u001b');
    assert.equal(textOf(res), asciiEscape(pyDumps(sc)));
  });

  it('unknown argument keys are ignored', async () => {
    const sc = await ex({ command: 'echo ok', no_such_key: 1, env: { A: 'b' } });
    assert.equal(sc.stdout, 'ok\n');
  });
});

describe('UTF-8 handling', () => {
  it('invalid bytes on stdout become U+FFFD', async () => {
    const sc = await ex({ command: "printf '\\xff\\xfeabc'" });
    assert.equal(sc.stdout, '\uFFFD\uFFFDabc');
  });

  it('invalid bytes on stderr become U+FFFD', async () => {
    const sc = await ex({ command: "printf 'x\\xffy' >&2" });
    assert.equal(sc.stderr, 'x\uFFFDy');
  });

  it('valid multibyte text passes unchanged', async () => {
    const sc = await ex({ command: "printf 'h\\xc3\\xa9llo \\xe2\\x9c\\x93 \\xf0\\x9f\\x98\\x80'" });
    assert.equal(sc.stdout, 'héllo ✓ 😀');
  });

  it('a truncated multibyte sequence at the end is replaced', async () => {
    const sc = await ex({ command: "printf 'ok\\xe2\\x9c'" });
    assert.ok(sc.stdout.startsWith('ok'), sc.stdout);
    assert.ok(sc.stdout.includes('\uFFFD'), JSON.stringify(sc.stdout));
    assert.ok(!/[\x80-\x9f]/.test(sc.stdout.slice(2)), 'no raw bytes leaked');
  });
});

describe('timeouts', () => {
  it('sleep 60 with timeout 1 → 124, stdout "", exact marker, returns promptly', async () => {
    const t0 = Date.now();
    const sc = await ex({ command: 'sleep 60', timeout: 1 });
    const wall = Date.now() - t0;
    assert.equal(sc.exit_code, 124);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, TIMEOUT_MARKER(1));
    assert.ok(wall < 6000, `returned after ${wall} ms`);
  });

  it('output produced before the timeout is not returned', async () => {
    const sc = await ex({ command: 'echo partial; echo partial-err >&2; sleep 60', timeout: 1 });
    assert.equal(sc.exit_code, 124);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, TIMEOUT_MARKER(1));
  });

  it('args mode times out too', async () => {
    const sc = await ex({ args: ['sleep', '61'], timeout: 1 });
    assert.equal(sc.exit_code, 124);
    assert.equal(sc.stderr, TIMEOUT_MARKER(1));
  });

  it('FIX: the timed-out command is killed inside the container (no "sleep 300" left)', async () => {
    const sc = await ex({ command: 'sleep 300; echo never', timeout: 1 });
    assert.equal(sc.exit_code, 124);
    const leftovers = await waitFor(async () => {
      const procs = await containerProcesses(containerName(A));
      const bad = procs.filter((p) => /sleep 300/.test(p));
      return bad.length === 0 ? true : null;
    }, { timeoutMs: 3000 });
    if (!leftovers) {
      const procs = await containerProcesses(containerName(A));
      assert.fail(`processes still running in the container after the timeout: ${JSON.stringify(procs)}`);
    }
  });

  it('FIX: a timed-out args command (no shell) is killed too', async () => {
    const sc = await ex({ args: ['sleep', '301'], timeout: 1 });
    assert.equal(sc.exit_code, 124);
    const ok = await waitFor(async () => !(await containerProcesses(containerName(A))).some((p) => /sleep 301/.test(p)),
      { timeoutMs: 3000 });
    assert.ok(ok, `sleep 301 still running: ${JSON.stringify(await containerProcesses(containerName(A)))}`);
  });

  it('FIX: background children of a timed-out command do not keep running', async () => {
    const sc = await ex({ command: 'sleep 302 & sleep 303; wait', timeout: 1 });
    assert.equal(sc.exit_code, 124);
    const ok = await waitFor(async () => !(await containerProcesses(containerName(A))).some((p) => /sleep 30[23]/.test(p)),
      { timeoutMs: 3000 });
    assert.ok(ok, `children still running: ${JSON.stringify(await containerProcesses(containerName(A)))}`);
  });

  it('the server-wide --timeout (2) applies when the call gives none', async () => {
    const t0 = Date.now();
    const sc = await exB({ command: 'sleep 30' });
    assert.equal(sc.exit_code, 124);
    assert.equal(sc.stderr, TIMEOUT_MARKER(2));
    assert.ok(Date.now() - t0 < 8000);
  });

  it('a per-call timeout above the server default is honoured', async () => {
    const sc = await exB({ command: 'sleep 3; echo done', timeout: 6 });
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout, 'done\n');
  });

  it('the computer still works after timeouts', async () => {
    assert.equal((await ex({ command: 'echo alive' })).stdout, 'alive\n');
  });
});

describe('output limit (--output-limit 1024)', () => {
  it('exactly 1024 bytes pass', async () => {
    const sc = await exB({ command: "head -c 1024 /dev/zero | tr '\\0' a" });
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout, 'a'.repeat(1024));
  });

  it('1025 bytes → exit 1, stdout "", exact marker', async () => {
    const sc = await exB({ command: "head -c 1025 /dev/zero | tr '\\0' a" });
    assert.equal(sc.exit_code, 1);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, LIMIT_MARKER(1024));
  });

  it('2048 bytes → limit exceeded', async () => {
    const sc = await exB({ command: "head -c 2048 /dev/zero | tr '\\0' b" });
    assert.notEqual(sc.exit_code, 0);
    assert.match(sc.stderr, /output limit exceeded/);
    assert.equal(sc.stdout, '');
  });

  it('stdout and stderr count together (600 + 600 > 1024)', async () => {
    const sc = await exB({ command: "head -c 600 /dev/zero | tr '\\0' o; head -c 600 /dev/zero | tr '\\0' e >&2" });
    assert.equal(sc.exit_code, 1);
    assert.equal(sc.stdout, '');
    assert.equal(sc.stderr, LIMIT_MARKER(1024));
  });

  it('FIX: an endless producer is stopped and killed inside the container', async () => {
    const t0 = Date.now();
    const sc = await exB({ command: 'yes ktlimit', timeout: 20 }, { timeoutMs: 30000 });
    assert.equal(sc.exit_code, 1);
    assert.equal(sc.stderr, LIMIT_MARKER(1024));
    assert.ok(Date.now() - t0 < 10000, 'limit hit long before the timeout');
    const ok = await waitFor(async () => !(await containerProcesses(containerName(B))).some((p) => /yes ktlimit/.test(p)),
      { timeoutMs: 3000 });
    assert.ok(ok, `yes still running: ${JSON.stringify(await containerProcesses(containerName(B)))}`);
  });

  it('the limit is never per call (a small command still passes afterwards)', async () => {
    assert.equal((await exB({ command: 'echo fine' })).stdout, 'fine\n');
  });
});

describe('per-computer serialization (§9)', () => {
  const stamp = 'sleep 1; date +%s.%N';

  it('two concurrent calls on the same computer do not overlap', async () => {
    await ex({ command: 'true' });
    const [r1, r2] = await Promise.all([ex({ command: stamp }), ex({ command: stamp })]);
    const t1 = parseFloat(r1.stdout);
    const t2 = parseFloat(r2.stdout);
    assert.ok(Number.isFinite(t1) && Number.isFinite(t2), `${r1.stdout} ${r2.stdout}`);
    assert.ok(Math.abs(t1 - t2) >= 0.95, `end times ${t1} and ${t2} are only ${Math.abs(t1 - t2).toFixed(3)} s apart`);
    // exec_duration_ms is measured after the per-computer lock (§2.1): both close to 1 s
    for (const r of [r1, r2]) assert.ok(r.exec_duration_ms >= 950 && r.exec_duration_ms < 1900, `exec_duration_ms ${r.exec_duration_ms}`);
  });

  it('calls on two different computers run in parallel', async () => {
    await Promise.all([ex({ command: 'true' }), a.exec({ computer_id: A2, command: 'true' })]);
    const [r1, r2] = await Promise.all([ex({ command: stamp }), a.exec({ computer_id: A2, command: stamp })]);
    const t1 = parseFloat(r1.stdout);
    const t2 = parseFloat(r2.stdout);
    assert.ok(Math.abs(t1 - t2) < 0.9, `end times ${t1} and ${t2} are ${Math.abs(t1 - t2).toFixed(3)} s apart (serialized?)`);
  });

  it('a long call on one computer does not block a short one on another', async () => {
    const long = ex({ command: 'sleep 3; echo long' });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const short = await a.exec({ computer_id: A2, command: 'echo short' });
    assert.equal(short.stdout, 'short\n');
    assert.ok(Date.now() - t0 < 2500, `short call waited ${Date.now() - t0} ms`);
    assert.equal((await long).stdout, 'long\n');
  });

  it('the timeout starts after the per-computer lock (two 1.5 s calls with timeout 2 both finish)', async () => {
    const cmd = 'sleep 1.5; echo done';
    const [r1, r2] = await Promise.all([ex({ command: cmd, timeout: 2 }), ex({ command: cmd, timeout: 2 })]);
    assert.equal(r1.exit_code, 0, JSON.stringify(r1));
    assert.equal(r2.exit_code, 0, JSON.stringify(r2));
  });

  it('stdout carried only JSON-RPC (no transport errors seen by the SDK)', () => {
    assert.deepEqual(a.transportErrors, []);
    assert.deepEqual(b.transportErrors, []);
  });
});
