// CLI: --help/--version, argparse-style parse errors (exit 2), startup validation (exit 1,
// `kilntainers: error: <msg>` on stderr), accepted flag combinations, tool description assembly.
// Reference: §6.1, §6.2, §6.3, §10 test_cli / test_cli_integration / test_server (description).
// No container is created by anything in this file.

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { runCli, startServer, TOOL, cleanupContainers } from './lib.mjs';

const ERR = 'kilntainers: error: ';

/** Assert a startup validation failure: exit 1, one `kilntainers: error: <msg>` line on stderr, nothing on stdout. */
function assertValidationError(r, msg) {
  assert.equal(r.code, 1, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'stdout must stay empty');
  const lines = r.stderr.split('\n');
  assert.ok(lines.includes(ERR + msg), `stderr ${JSON.stringify(r.stderr)} lacks the line ${JSON.stringify(ERR + msg)}`);
}

function assertParseError(r, ...needles) {
  assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'stdout must stay empty');
  assert.ok(r.stderr.includes(ERR), `stderr has the argparse error line: ${r.stderr}`);
  for (const n of needles) assert.ok(r.stderr.includes(n), `stderr ${JSON.stringify(r.stderr)} mentions ${n}`);
}

async function toolDescription(flags) {
  const s = await startServer(flags);
  try {
    const { tools } = await s.client.listTools();
    const t = tools.find((x) => x.name === TOOL);
    assert.ok(t, `${TOOL} listed`);
    return t.description;
  } finally {
    await s.close();
  }
}

after(() => cleanupContainers());

describe('--help and --version', () => {
  it('--help exits 0 and lists every core, description and docker flag with defaults', async () => {
    const r = await runCli(['--help']);
    assert.equal(r.code, 0, r.stderr);
    const h = r.stdout;
    for (const flag of ['--backend', '--transport', '--host', '--port', '--timeout', '--output-limit', '--session-timeout',
      '--auth-token', '--allow-unauthenticated-http', '--shell', '--network', '--no-network',
      '--tool-instruction-override', '--extended-tool-instruction',
      '--engine', '--docker-host', '--image', '--cpu', '--memory', '--docker-run-flag']) {
      assert.ok(h.includes(flag), `help lists ${flag}`);
    }
    for (const dflt of ['debian:bookworm-slim', '/bin/bash', '120']) assert.ok(h.includes(dflt), `help shows default ${dflt}`);
    for (const group of ['core options', 'tool description', 'docker backend options']) {
      assert.ok(h.includes(group), `help has group "${group}"`);
    }
    assert.match(h, /usage: kilntainers/i, 'argparse prog is kilntainers');
  });

  it('-h is the same as --help', async () => {
    const a = await runCli(['--help']);
    const b = await runCli(['-h']);
    assert.equal(b.code, 0);
    assert.equal(b.stdout, a.stdout);
  });

  it('--version exits 0 and prints a version', async () => {
    const r = await runCli(['--version']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout + r.stderr, /\d+\.\d+\.\d+/);
  });
});

describe('parse errors exit 2', () => {
  const cases = [
    [['--backend', 'unknown'], '--backend'],
    [['--transport', 'websocket'], '--transport'],
    [['--port', 'abc'], '--port'],
    [['--timeout', 'abc'], '--timeout'],
    [['--output-limit', '1.5'], '--output-limit'],
    [['--no-such-flag'], '--no-such-flag'],
    [['--timeout'], '--timeout'],
    [['--image'], '--image'],
    [['positional-arg'], 'positional-arg'],
  ];
  for (const [args, needle] of cases) {
    it(`${args.join(' ')} → usage error, exit 2`, async () => {
      assertParseError(await runCli(args), needle);
    });
  }
});

describe('startup validation exits 1 with kilntainers: error:', () => {
  const HOST = '--host is only valid with --transport http. In stdio mode, there is no HTTP server to bind.';
  const PORT = '--port is only valid with --transport http. In stdio mode, there is no HTTP server to bind.';
  const SESS = '--session-timeout is only valid with --transport http. In stdio mode, the session lives as long as the process.';
  const BOTH = 'Cannot use both --tool-instruction-override and --extended-tool-instruction. Use override to replace the description entirely, or extended to append to the backend default.';
  const cases = [
    [['--host', '0.0.0.0'], HOST],
    [['--port', '9090'], PORT],
    [['--session-timeout', '600'], SESS],
    [['--tool-instruction-override', 'A', '--extended-tool-instruction', 'B'], BOTH],
    [['--timeout', '0'], '--timeout must be at least 1 second.'],
    [['--timeout', '-1'], '--timeout must be at least 1 second.'],
    [['--timeout', '-5'], '--timeout must be at least 1 second.'],
    [['--output-limit', '0'], '--output-limit must be at least 1 byte.'],
    // first failure wins, in the order of §6.2
    [['--timeout', '0', '--host', '0.0.0.0'], HOST],
    [['--output-limit', '0', '--tool-instruction-override', 'A', '--extended-tool-instruction', 'B'], BOTH],
  ];
  for (const [args, msg] of cases) {
    it(`${args.join(' ')}`, async () => {
      assertValidationError(await runCli(args), msg);
    });
  }

  it('stdio --host 0.0.0.0 message names --host and stdio', async () => {
    const r = await runCli(['--host', '0.0.0.0']);
    assert.equal(r.code, 1);
    for (const n of ['--host', 'stdio', ERR]) assert.ok(r.stderr.includes(n), `stderr mentions ${n}`);
  });

  // Deliberate fix of the reference (its §6.3 made `--image X` unusable
  // without --tool-instruction-override): any image gets a description.
  it('a non-default image gets a generic description naming the image', async () => {
    const d = await toolDescription(['--image', 'alpine:3.19']);
    assert.ok(d.includes('alpine:3.19'), d);
    assert.ok(!d.includes('Debian'), d);
  });
});

describe('accepted configurations start and exit 0 on stdin EOF', () => {
  const cases = [
    [],
    ['--timeout', '1'],
    ['--timeout=5'],
    ['--output-limit', '1'],
    ['--tool-instruction-override', 'only override'],
    ['--extended-tool-instruction', 'only extended'],
    ['--host', '127.0.0.1', '--port', '8435', '--session-timeout', '300'],
    ['--backend', 'docker', '--transport', 'stdio'],
    ['--no-network'],
    ['--network'],
    ['--cpu', '1.5', '--memory', '512m'],
    ['--docker-run-flag=--pids-limit=256', '--docker-run-flag=--env=A=1'],
    ['--engine', 'docker', '--docker-host', 'unix:///var/run/docker.sock'],
    ['--shell', '/bin/sh'],
    ['--image', 'alpine:3.19', '--tool-instruction-override', 'Alpine box'],
  ];
  for (const args of cases) {
    it(`[${args.join(' ')}]`, async () => {
      const r = await runCli(args);
      assert.equal(r.code, 0, `exit code; stderr: ${r.stderr}`);
      assert.ok(!r.stderr.includes(ERR), `no error line: ${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing on stdout without input');
    });
  }
});

describe('tool description (§6.3)', () => {
  let base;
  it('docker default description mentions Debian, bash and the 120 s default timeout', async () => {
    base = await toolDescription([]);
    assert.equal(typeof base, 'string');
    for (const n of ['Debian', 'bash', '120']) assert.ok(base.includes(n), `description mentions ${n}: ${base}`);
  });

  it('--timeout 7 is reflected in the description', async () => {
    const d = await toolDescription(['--timeout', '7']);
    assert.match(d, /\b7\b/);
    assert.doesNotMatch(d, /\b120\b/);
  });

  it('--shell /bin/sh: commands run in sh', async () => {
    const d = await toolDescription(['--shell', '/bin/sh']);
    assert.doesNotMatch(d, /\bbash\b/, d);
    assert.match(d, /\bsh\b/, d);
  });

  it('--tool-instruction-override replaces the description verbatim', async () => {
    const text = 'Custom sandbox: a Debian Linux bash shell.\nSecond line.';
    assert.equal(await toolDescription(['--tool-instruction-override', text]), text);
  });

  it('--extended-tool-instruction appends "\\n\\n" + text to the backend text', async () => {
    const d = await toolDescription(['--extended-tool-instruction', 'Extra rules here.']);
    assert.ok(base, 'base description from the first test');
    assert.equal(d, `${base}\n\nExtra rules here.`);
  });

  it('argparse prefix and = forms: --output-lim=1 and --tool-instruction-o=X', async () => {
    assert.equal(await toolDescription(['--output-lim=1', '--tool-instruction-o=X']), 'X');
  });
});
