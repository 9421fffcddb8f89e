// Malformed and hostile input over raw stdio: every bad line gets a clear JSON-RPC error (or an
// isError result for bad tool arguments), the server keeps serving, and stdout only ever carries
// JSON-RPC lines (logs go to stderr).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RawServer, cid, cleanupContainers, containerOf, TOOL, CREATE_FAILED, waitFor } from './lib.mjs';

let s;
const C = cid('bad');

before(async () => {
  s = new RawServer(['--timeout', '10']);
  const init = await s.initialize('2025-06-18');
  assert.ok(init.result, JSON.stringify(init));
});

after(async () => {
  const ex = await s?.close();
  await cleanupContainers();
  assert.deepEqual(s.badLines, [], 'every stdout line was a JSON-RPC 2.0 message');
  assert.equal(ex?.code, 0, `clean exit after EOF; stderr tail: ${s.stderrText.slice(-500)}`);
});

/** The next message written after index `from` that is an error response with id null (or any id). */
function nextError(from, timeoutMs = 15000) {
  return s.waitMessage((m) => 'error' in m && !('result' in m), timeoutMs, { fromIndex: from });
}

async function assertStillServing() {
  const r = await s.ping();
  assert.deepEqual(r.result, {});
  assert.ok(s.alive, 'server process alive');
}

/** Either an isError tool result or a JSON-RPC -32602 error. */
function assertBadArgs(r) {
  if (r.error) {
    assert.equal(r.error.code, -32602, `expected -32602, got ${JSON.stringify(r.error)}`);
  } else {
    assert.equal(r.result?.isError, true, `expected isError result, got ${JSON.stringify(r).slice(0, 400)}`);
    assert.ok(r.result.content?.[0]?.text, 'the error result explains itself');
  }
}

const call = (args, opts) => s.request('tools/call', { name: TOOL, arguments: args }, { timeoutMs: 30000, ...opts });

describe('malformed lines', () => {
  it('not JSON → -32700 with id null', async () => {
    const from = s.messages.length;
    await s.write('{not json at all\n');
    const e = await nextError(from);
    assert.equal(e.error.code, -32700, JSON.stringify(e));
    assert.equal(e.id, null);
    await assertStillServing();
  });

  it('truncated JSON → -32700', async () => {
    const from = s.messages.length;
    await s.write('{"jsonrpc":"2.0","id":5,"method":"pi\n');
    const e = await nextError(from);
    assert.equal(e.error.code, -32700, JSON.stringify(e));
    await assertStillServing();
  });

  it('plain garbage bytes → -32700', async () => {
    const from = s.messages.length;
    await s.write(Buffer.from([0x00, 0x01, 0x02, 0x7f, 0x0a]));
    const e = await nextError(from);
    assert.equal(e.error.code, -32700, JSON.stringify(e));
    await assertStillServing();
  });

  it('invalid UTF-8 inside a JSON string → JSON-RPC error, server keeps serving', async () => {
    const from = s.messages.length;
    const line = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":"utf8-bad","method":"ping","params":{"x":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}}\n'),
    ]);
    await s.write(line);
    const e = await nextError(from);
    assert.ok([-32700, -32600, -32602].includes(e.error.code), JSON.stringify(e));
    await assertStillServing();
  });

  it('invalid UTF-8 in a tool argument → error, no command runs', async () => {
    const from = s.messages.length;
    const line = Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":"utf8-arg","method":"tools/call","params":{"name":"${TOOL}","arguments":{"computer_id":"${C}","command":"echo `),
      Buffer.from([0xc0, 0xaf, 0xff]),
      Buffer.from('"}}}\n'),
    ]);
    await s.write(line);
    const r = await s.waitMessage((m) => m.id === 'utf8-arg' || (m.id === null && 'error' in m), 30000, { fromIndex: from });
    assert.ok(r.error || r.result?.isError, `expected an error, got ${JSON.stringify(r).slice(0, 300)}`);
    await assertStillServing();
  });

  it('valid JSON that is not a request object (42, [], "x") → -32600 or -32700', async () => {
    for (const bad of ['42', '[]', '"x"', 'null', '{}', '{"jsonrpc":"1.0","id":1,"method":"ping"}']) {
      const from = s.messages.length;
      await s.write(bad + '\n');
      const e = await nextError(from);
      assert.ok([-32600, -32700].includes(e.error.code), `${bad} → ${JSON.stringify(e)}`);
    }
    await assertStillServing();
  });

  it('a request with a non-string method → -32600', async () => {
    const from = s.messages.length;
    await s.write('{"jsonrpc":"2.0","id":77,"method":5}\n');
    const e = await nextError(from);
    assert.equal(e.error.code, -32600, JSON.stringify(e));
    await assertStillServing();
  });

  it('blank lines are ignored or answered with an error, never fatal', async () => {
    await s.write('\n\n   \n');
    await assertStillServing();
  });

  it('CRLF line endings are accepted', async () => {
    await s.write('{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n');
    const r = await s.response('crlf');
    assert.deepEqual(r.result, {});
  });

  it('a 50 MB line (valid JSON, huge stdin) → error, server keeps serving', async () => {
    const from = s.messages.length;
    const big = 'y'.repeat(50 * 1024 * 1024);
    await s.write(`{"jsonrpc":"2.0","id":"big-valid","method":"tools/call","params":{"name":"${TOOL}","arguments":{"computer_id":"${C}","command":"wc -c","stdin":"${big}"}}}\n`);
    const r = await s.waitMessage((m) => m.id === 'big-valid' || (m.id === null && 'error' in m), 60000, { fromIndex: from });
    if (r.result) {
      assert.equal(r.result.isError, true, 'a 50 MB stdin must be refused');
      assert.match(r.result.content[0].text, /stdin content exceeds the 2 MiB limit|too large|limit/);
    } else {
      assert.ok(r.error.code <= -32000 || [-32700, -32600, -32602].includes(r.error.code), JSON.stringify(r.error));
    }
    await assertStillServing();
  });

  it('a 50 MB line of garbage → error, server keeps serving', async () => {
    const from = s.messages.length;
    await s.write(Buffer.alloc(50 * 1024 * 1024, 0x7a));
    await s.write('\n');
    const e = await nextError(from, 60000);
    assert.ok(e.error && typeof e.error.code === 'number', JSON.stringify(e).slice(0, 300));
    await assertStillServing();
  });

  it('a NUL or control character in a method, tool name, id or path → -32602, nothing served (issue 27)', async () => {
    // Parsed with NULs allowed (stdin may hold any byte), these were read as C strings: served
    // as tools/list, as terminal_execute, in /tmp. Each is refused whole now.
    const lines = [
      ['m', '{"jsonrpc":"2.0","id":"m","method":"tools/list\\u0000x","params":{}}'],
      ['n', '{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"terminal_execute\\u0000x","arguments":{"command":"echo served"}}}'],
      ['w', '{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"pwd","working_directory":"/tmp\\u0000x"}}}'],
      ['t', '{"jsonrpc":"2.0","id":"t","method":"tools/list\\t","params":{}}'],
    ];
    for (const [id, line] of lines) {
      await s.write(`${line}\n`);
      const r = await s.response(id);
      assert.equal(r.error?.code, -32602, `${id}: ${JSON.stringify(r).slice(0, 400)}`);
      assert.match(r.error.message, /NUL|control/);
    }
    const from = s.messages.length;
    await s.write('{"jsonrpc":"2.0","id":"a\\u0000b","method":"ping"}\n');
    const e = await nextError(from);
    assert.equal(e.error.code, -32602, JSON.stringify(e));
    assert.equal(e.id, null);
    await assertStillServing();
  });

  it('a message split across several writes is reassembled', async () => {
    const msg = JSON.stringify({ jsonrpc: '2.0', id: 'split', method: 'ping' }) + '\n';
    for (const part of [msg.slice(0, 5), msg.slice(5, 20), msg.slice(20)]) {
      await s.write(part);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual((await s.response('split')).result, {});
  });
});

describe('bad tool arguments', () => {
  it('timeout:"abc" → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, command: 'true', timeout: 'abc' }));
  });

  it('args:5 → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, args: 5 }));
  });

  it('args with a non-string element → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, args: ['echo', 5] }));
  });

  it('command:123 → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, command: 123 }));
  });

  it('fractional timeout 1.5 → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, command: 'true', timeout: 1.5 }));
  });

  it('temporary:"maybe" → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, command: 'true', temporary: 'maybe' }));
  });

  it('computer_id:7 → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: 7, command: 'true' }));
  });

  it('explicit null for an optional parameter → isError or -32602', async () => {
    assertBadArgs(await call({ computer_id: C, command: 'true', timeout: null }));
  });

  it('arguments that are not an object → isError or -32602', async () => {
    assertBadArgs(await s.request('tools/call', { name: TOOL, arguments: 'echo hi' }));
    assertBadArgs(await s.request('tools/call', { name: TOOL, arguments: [1, 2] }));
  });

  it('tools/call without a name → -32602 (or isError)', async () => {
    assertBadArgs(await s.request('tools/call', { arguments: {} }));
  });

  it('huge timeout value (1e12) is refused or handled, server keeps serving', async () => {
    const r = await call({ computer_id: C, command: 'echo ok', timeout: 1e12 });
    assert.ok(r.result || r.error, JSON.stringify(r));
    if (r.result && !r.result.isError) assert.equal(r.result.structuredContent.stdout, 'ok\n');
    await assertStillServing();
  });

  it('reference-compat: numeric strings are coerced (timeout:"5" works)', async () => {
    const r = await call({ computer_id: C, command: 'echo coerced', timeout: '5' }, { timeoutMs: 60000 });
    assert.ok(r.result && !r.result.isError, JSON.stringify(r).slice(0, 400));
    assert.equal(r.result.structuredContent.stdout, 'coerced\n');
  });

  it('reference-compat: JSON-encoded args string is pre-parsed (args:"[\\"echo\\",\\"hi\\"]")', async () => {
    const r = await call({ computer_id: C, args: '["echo","hi"]' }, { timeoutMs: 60000 });
    assert.ok(r.result && !r.result.isError, JSON.stringify(r).slice(0, 400));
    assert.equal(r.result.structuredContent.stdout, 'hi\n');
  });

  it('unknown tool → isError "Unknown tool: <name>" or a JSON-RPC error', async () => {
    const r = await s.request('tools/call', { name: 'no_such_tool', arguments: {} });
    if (r.error) {
      assert.ok([-32602, -32601].includes(r.error.code), JSON.stringify(r.error));
      assert.match(r.error.message, /no_such_tool/);
    } else {
      assert.equal(r.result.isError, true);
      assert.equal(r.result.content[0].text, 'Unknown tool: no_such_tool');
    }
  });

  it('after all of that, a normal call works', async () => {
    const r = await call({ computer_id: C, command: 'echo still fine' }, { timeoutMs: 60000 });
    assert.ok(r.result && !r.result.isError, JSON.stringify(r).slice(0, 400));
    assert.equal(r.result.structuredContent.stdout, 'still fine\n');
    assert.ok(await containerOf(C));
  });
});

describe('stdout hygiene', () => {
  it('a separate server with a dead engine and noisy commands writes only JSON-RPC to stdout', async () => {
    const d = new RawServer(['--docker-host', 'unix:///nonexistent.sock']);
    try {
      await d.initialize();
      const r = await d.request('tools/call', { name: TOOL, arguments: { computer_id: cid('hyg'), command: 'echo x' } }, { timeoutMs: 40000 });
      assert.equal(r.result?.isError, true, JSON.stringify(r));
      // The engine's failure is a generic text for the agent; the reason goes to stderr.
      assert.equal(r.result.content[0].text, CREATE_FAILED);
      assert.ok(await waitFor(() => /Cannot connect to/.test(d.stderrText), { timeoutMs: 5000, intervalMs: 100 }));
      await d.write('garbage\n');
      await d.ping();
    } finally {
      await d.close();
    }
    assert.deepEqual(d.badLines, [], 'only JSON-RPC lines on stdout');
  });
});
