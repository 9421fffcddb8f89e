// The Streamable HTTP contract, request by request (raw node:http): endpoints, session ids,
// status codes, content negotiation, body limits, garbage bodies and the DNS-rebinding guard of
// a loopback listener. No container is needed except for the final liveness check.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startHttpServer, request, rawExchange, rawSession, rpc, initializeBody, connect, cleanupContainers, cid,
  ROOT_DOC, SUPPORTED_VERSIONS, PROTOCOL_VERSION,
} from './lib.mjs';

let srv;
before(async () => { srv = await startHttpServer([]); });
after(async () => {
  if (srv) {
    await srv.stop();
    assert.equal(srv.stdout(), '', 'the HTTP server prints nothing on stdout');
  }
  await cleanupContainers();
});

const isJson = (res) => /^application\/json\b/i.test(res.headers['content-type'] ?? '');
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
function assertRpcError(res, status, code, what) {
  assert.equal(res.status, status, `${what}: status (body ${JSON.stringify(res.text.slice(0, 300))})`);
  assert.ok(res.json, `${what}: JSON body, got ${JSON.stringify(res.text.slice(0, 300))}`);
  assert.equal(res.json.jsonrpc, '2.0', `${what}: jsonrpc 2.0`);
  assert.ok(res.json.error, `${what}: error member`);
  if (code !== undefined) {
    if (Array.isArray(code)) assert.ok(code.includes(res.json.error.code), `${what}: error code ${res.json.error.code} in ${code}`);
    else assert.equal(res.json.error.code, code, `${what}: error code`);
  }
}

describe('open endpoints', () => {
  it('GET /healthz → 200 {"status":"ok"}', async () => {
    const r = await request(srv, { method: 'GET', path: '/healthz' });
    assert.equal(r.status, 200);
    assert.ok(isJson(r), `content-type ${r.headers['content-type']}`);
    assert.deepEqual(r.json, { status: 'ok' });
  });

  it('GET / → 200 with the server document', async () => {
    const r = await request(srv, { method: 'GET', path: '/' });
    assert.equal(r.status, 200);
    assert.ok(isJson(r), `content-type ${r.headers['content-type']}`);
    assert.deepEqual(r.json, ROOT_DOC);
  });
});

describe('sessions', () => {
  it('initialize without a session id → 200 application/json with a visible-ASCII Mcp-Session-Id', async () => {
    const r = await request(srv, { body: initializeBody() });
    assert.equal(r.status, 200, r.text);
    assert.ok(isJson(r), `replies are application/json, never SSE; got ${r.headers['content-type']}`);
    const sid = r.headers['mcp-session-id'];
    assert.ok(sid, 'Mcp-Session-Id header');
    assert.match(sid, VISIBLE_ASCII);
    assert.equal(r.json.jsonrpc, '2.0');
    assert.equal(r.json.result.protocolVersion, PROTOCOL_VERSION);
    assert.ok(r.json.result.capabilities.tools, 'tools capability');
    assert.equal(r.json.result.serverInfo.name, 'Kilntainers');
  });

  it('two initializes get two different session ids', async () => {
    const a = await rawSession(srv);
    const b = await rawSession(srv);
    assert.notEqual(a.session, b.session);
  });

  for (const v of SUPPORTED_VERSIONS) {
    it(`initialize asking for ${v} is answered with ${v}, and requests carrying MCP-Protocol-Version ${v} are served`, async () => {
      const { session, res } = await rawSession(srv, { protocolVersion: v });
      assert.equal(res.json.result.protocolVersion, v);
      const p = await request(srv, { body: rpc('ping'), session, protocolVersion: v });
      assert.equal(p.status, 200, p.text);
      assert.deepEqual(p.json.result, {});
    });
  }

  it('a request without MCP-Protocol-Version is served (defaults apply)', async () => {
    const { session } = await rawSession(srv);
    const r = await request(srv, { body: rpc('tools/list'), session });
    assert.equal(r.status, 200, r.text);
    assert.ok(isJson(r));
    assert.ok(r.json.result.tools.some((t) => t.name === 'terminal_execute'));
  });

  it('a request without Mcp-Session-Id → 400', async () => {
    const r = await request(srv, { body: rpc('tools/list') });
    assert.equal(r.status, 400, r.text);
  });

  it('a notification without Mcp-Session-Id → 400', async () => {
    const r = await request(srv, { body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(r.status, 400, r.text);
  });

  it('an unknown session id → 404 with JSON-RPC error -32001 "Session not found"', async () => {
    const r = await request(srv, { body: rpc('ping'), session: 'no-such-session-0123456789' });
    assertRpcError(r, 404, -32001, 'unknown session');
    assert.match(r.json.error.message, /Session not found/);
  });

  it('a notification → 202 with an empty body', async () => {
    const { session } = await rawSession(srv);
    const r = await request(srv, { body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999, reason: 'x' } }, session });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
  });

  it('a JSON-RPC response (result and error) → 202 with an empty body', async () => {
    const { session } = await rawSession(srv);
    const r1 = await request(srv, { body: { jsonrpc: '2.0', id: 'srv-1', result: {} }, session });
    assert.equal(r1.status, 202);
    assert.equal(r1.text, '');
    const r2 = await request(srv, { body: { jsonrpc: '2.0', id: 'srv-2', error: { code: -1, message: 'no' } }, session });
    assert.equal(r2.status, 202);
    assert.equal(r2.text, '');
  });

  it('an unsupported MCP-Protocol-Version → 400', async () => {
    const { session } = await rawSession(srv);
    for (const v of ['1999-01-01', '2099-12-31', 'garbage']) {
      const r = await request(srv, { body: rpc('ping'), session, protocolVersion: v });
      assert.equal(r.status, 400, `MCP-Protocol-Version ${v}: ${r.text}`);
    }
  });

  it('DELETE with the session id → 200; afterwards the session is 404 (-32001) for POST and DELETE', async () => {
    const { session } = await rawSession(srv);
    const d = await request(srv, { method: 'DELETE', session, json: false });
    assert.equal(d.status, 200, d.text);
    const p = await request(srv, { body: rpc('ping'), session });
    assertRpcError(p, 404, -32001, 'POST after DELETE');
    const d2 = await request(srv, { method: 'DELETE', session, json: false });
    assert.equal(d2.status, 404, `second DELETE: ${d2.text}`);
  });

  it('DELETE without Mcp-Session-Id → 400; DELETE of an unknown session → 404', async () => {
    const d = await request(srv, { method: 'DELETE', json: false });
    assert.equal(d.status, 400, d.text);
    const u = await request(srv, { method: 'DELETE', session: 'no-such-session-0123456789', json: false });
    assert.equal(u.status, 404, u.text);
  });

  it('GET /mcp → 405 (no standalone SSE stream), with and without a session', async () => {
    const { session } = await rawSession(srv);
    const a = await request(srv, { method: 'GET', json: false, headers: { Accept: 'text/event-stream' } });
    assert.equal(a.status, 405, a.text);
    const b = await request(srv, { method: 'GET', json: false, session, headers: { Accept: 'text/event-stream' }, protocolVersion: PROTOCOL_VERSION });
    assert.equal(b.status, 405, b.text);
  });

  it('the SDK client works end to end (initialize, GET 405 tolerated, tools/list, ping, DELETE)', async () => {
    const s = await connect(srv);
    assert.match(s.sessionId, VISIBLE_ASCII);
    const tools = await s.client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'terminal_execute'));
    await s.client.ping();
    await s.terminate();
    assert.deepEqual(s.transportErrors, [], 'no transport errors reported by the SDK');
  });
});

describe('content negotiation', () => {
  const accepts = [
    ['only application/json', 'application/json'],
    ['only text/event-stream', 'text/event-stream'],
    ['text/html', 'text/html'],
    ['missing', null],
  ];
  for (const [what, accept] of accepts) {
    it(`POST with Accept ${what} → 406`, async () => {
      const r = await request(srv, { body: initializeBody(), headers: { Accept: accept } });
      assert.equal(r.status, 406, r.text);
      const { session } = await rawSession(srv);
      const r2 = await request(srv, { body: rpc('ping'), session, headers: { Accept: accept } });
      assert.equal(r2.status, 406, `with a session: ${r2.text}`);
    });
  }

  it('Accept with parameters and q-values is fine', async () => {
    const r = await request(srv, { body: initializeBody(), headers: { Accept: 'text/event-stream;q=0.5, application/json;q=0.9' } });
    assert.equal(r.status, 200, r.text);
  });

  for (const [what, ct] of [['text/plain', 'text/plain'], ['missing', null], ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded']]) {
    it(`POST with Content-Type ${what} → 415`, async () => {
      const r = await request(srv, { body: initializeBody(), headers: { 'Content-Type': ct } });
      assert.equal(r.status, 415, r.text);
    });
  }

  it('Content-Type application/json; charset=utf-8 is accepted', async () => {
    const r = await request(srv, { body: initializeBody(), headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    assert.equal(r.status, 200, r.text);
  });
});

describe('bodies', () => {
  const MiB = 1024 * 1024;
  const padded = (total) => {
    const head = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"pad":"';
    const tail = '"}}}';
    return head + 'x'.repeat(total - head.length - tail.length) + tail;
  };

  const oversize = async (what, opts) => {
    const r = await rawExchange(srv, opts);
    assert.ok(r.status !== null, `${what}: no HTTP response (write error ${r.writeError}, read error ${r.readError}); expected 413`);
    return r;
  };

  it('a 5 MB body (Content-Length) → 413, and the server goes on', async () => {
    const { session } = await rawSession(srv);
    const r = await oversize('5 MB', { body: padded(5 * 1000 * 1000), headers: { 'Mcp-Session-Id': session } });
    assert.equal(r.status, 413, r.head);
    const p = await request(srv, { body: rpc('ping'), session });
    assert.equal(p.status, 200);
  });

  it('a 5 MB body without a session → 413', async () => {
    const r = await oversize('5 MB, no session', { body: padded(5 * 1000 * 1000) });
    assert.equal(r.status, 413, r.head);
  });

  it('a 5 MB chunked body → 413 (or 411 if chunked bodies are refused outright)', async () => {
    const { session } = await rawSession(srv);
    const r = await oversize('5 MB chunked', { body: padded(5 * 1000 * 1000), chunked: true, headers: { 'Mcp-Session-Id': session } });
    assert.ok([413, 411].includes(r.status), `status ${r.status}: ${r.head}`);
    const p = await request(srv, { body: rpc('ping'), session });
    assert.equal(p.status, 200);
  });

  it('a declared Content-Length of 5 MB with no body sent → 413 at once', async () => {
    const r = await rawExchange(srv, { body: Buffer.alloc(0), headers: { 'Content-Length': String(5 * 1000 * 1000) }, timeoutMs: 5000 });
    assert.equal(r.status, 413, `status ${r.status} (${r.readError ?? ''})`);
  });

  it('fetch (what the SDK client uses) posting a 5 MB body sees the 413 every time, not a broken connection', async () => {
    // A server that answers 413 and closes at once, without draining the body it did not read,
    // makes the client's socket reset while it is still sending: the client then reports
    // EPIPE/ECONNRESET ("fetch failed") instead of the status.
    const body = padded(5 * 1000 * 1000);
    const seen = {};
    for (let i = 0; i < 10; i++) {
      let k;
      try {
        const r = await fetch(srv.url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } });
        await r.arrayBuffer();
        k = String(r.status);
      } catch (e) {
        k = e.cause?.code ?? e.message;
      }
      seen[k] = (seen[k] ?? 0) + 1;
    }
    assert.deepEqual(seen, { 413: 10 }, 'outcomes of 10 fetches of a 5 MB body');
  });

  it('a body of 4 MiB + 1 byte → 413; a valid request of 4 MiB - 4 KiB → 200', async () => {
    const { session } = await rawSession(srv);
    const over = await oversize('4 MiB + 1', { body: padded(4 * MiB + 1), headers: { 'Mcp-Session-Id': session } });
    assert.equal(over.status, 413, `4 MiB + 1: ${over.head}`);
    const under = await request(srv, { body: padded(4 * MiB - 4096), session });
    assert.equal(under.status, 200, `4 MiB - 4 KiB: ${under.text.slice(0, 300)}`);
    assert.equal(under.json.id, 7);
  });

  const garbage = [
    ['plain text', 'this is not json'],
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":"ping"'],
    ['a lone brace', '{'],
    ['binary bytes', Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81, 0xc3, 0x28, 0x0a])],
    ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])],
    ['NUL bytes', Buffer.alloc(64)],
    ['XML', '<?xml version="1.0"?><methodCall/>'],
    ['JSON with trailing garbage', '{"jsonrpc":"2.0","id":1,"method":"ping"} trailing'],
  ];
  for (const [what, body] of garbage) {
    it(`garbage body (${what}) → 400 with JSON-RPC -32700, with and without a session`, async () => {
      const r0 = await request(srv, { body });
      assertRpcError(r0, 400, -32700, `${what}, no session`);
      const { session } = await rawSession(srv);
      const r1 = await request(srv, { body, session });
      assertRpcError(r1, 400, -32700, `${what}, with session`);
      const p = await request(srv, { body: rpc('ping'), session });
      assert.equal(p.status, 200, 'the session still works');
    });
  }

  it('an empty body → 400', async () => {
    const { session } = await rawSession(srv);
    const r = await request(srv, { body: '', session });
    assert.equal(r.status, 400, r.text);
  });

  it('JSON that is not a JSON-RPC message → 400 with a JSON-RPC error (-32700 or -32600)', async () => {
    const { session } = await rawSession(srv);
    const bad = [];
    for (const body of ['{"foo":1}', '{}', '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0"}', '42', '"str"', 'null', 'true',
      '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":5}']) {
      const r = await request(srv, { body, session });
      const ok = r.status === 400 && [-32700, -32600].includes(r.json?.error?.code);
      if (!ok) bad.push(`${body} → ${r.status} ${JSON.stringify(r.text)}`);
    }
    assert.deepEqual(bad, [], 'bodies answered otherwise');
  });

  it('many garbage requests in a row leave the server serving', async () => {
    const { session } = await rawSession(srv);
    await Promise.all(Array.from({ length: 200 }, (_, i) => request(srv, { body: `garbage ${i} {{{`, session })));
    const p = await request(srv, { body: rpc('ping'), session });
    assert.equal(p.status, 200);
    const h = await request(srv, { method: 'GET', path: '/healthz' });
    assert.equal(h.status, 200);
  });
});

describe('DNS-rebinding guard on a loopback listener', () => {
  const foreignHosts = (port) => ['evil.example.com', `evil.example.com:${port}`, `127.0.0.1.evil.example.com:${port}`,
    `localhost.evil.example.com:${port}`, `10.0.0.1:${port}`, `0.0.0.0:${port}`];
  it('a foreign Host → 421 or 403 (initialize and in-session requests)', async () => {
    const { session } = await rawSession(srv);
    for (const host of foreignHosts(srv.port)) {
      const r = await request(srv, { body: initializeBody(), headers: { Host: host } });
      assert.ok([421, 403].includes(r.status), `initialize with Host ${host}: status ${r.status}`);
      assert.equal(r.headers['mcp-session-id'], undefined, `Host ${host}: no session issued`);
      const r2 = await request(srv, { body: rpc('ping'), session, headers: { Host: host } });
      assert.ok([421, 403].includes(r2.status), `ping with Host ${host}: status ${r2.status}`);
    }
  });

  it('the loopback Host names are accepted, with any port', async () => {
    for (const host of [`127.0.0.1:${srv.port}`, `localhost:${srv.port}`, `[::1]:${srv.port}`, 'localhost:1', '127.0.0.1:65535']) {
      const r = await request(srv, { body: initializeBody(), headers: { Host: host } });
      assert.equal(r.status, 200, `Host ${host}: ${r.text.slice(0, 200)}`);
    }
  });

  it('a foreign Origin → 403', async () => {
    const { session } = await rawSession(srv);
    for (const origin of ['http://evil.example.com', `http://evil.example.com:${srv.port}`, 'https://attacker.test',
      `http://localhost.evil.example.com:${srv.port}`, `http://127.0.0.1.evil.example.com`, 'null', 'file://', `ftp://localhost:${srv.port}`]) {
      const r = await request(srv, { body: initializeBody(), headers: { Origin: origin } });
      assert.equal(r.status, 403, `initialize with Origin ${origin}`);
      assert.equal(r.headers['mcp-session-id'], undefined, `Origin ${origin}: no session issued`);
      const r2 = await request(srv, { body: rpc('ping'), session, headers: { Origin: origin } });
      assert.equal(r2.status, 403, `ping with Origin ${origin}`);
    }
  });

  it('loopback Origins are accepted, with and without a port, http and https', async () => {
    for (const origin of [`http://127.0.0.1:${srv.port}`, `http://localhost:${srv.port}`, `http://[::1]:${srv.port}`,
      'https://localhost:9999', 'http://127.0.0.1', 'https://[::1]', 'http://localhost']) {
      const r = await request(srv, { body: initializeBody(), headers: { Origin: origin } });
      assert.equal(r.status, 200, `Origin ${origin}: ${r.text.slice(0, 200)}`);
    }
  });

  it('the conformance check: foreign Host + Origin together → 4xx; own Host + Origin → 2xx', async () => {
    const bad = await request(srv, { body: initializeBody(), headers: { Host: 'evil.example.com', Origin: 'http://evil.example.com' } });
    assert.ok(bad.status >= 400 && bad.status < 500, `status ${bad.status}`);
    const good = await request(srv, { body: initializeBody(), headers: { Host: srv.hostHeader, Origin: `http://${srv.hostHeader}` } });
    assert.ok(good.status >= 200 && good.status < 300, `status ${good.status}`);
  });
});

describe('after all of the above', () => {
  it('the server still runs commands', async () => {
    const s = await connect(srv);
    try {
      const sc = await s.exec({ command: 'echo alive', computer_id: cid('contract') });
      assert.equal(sc.stdout, 'alive\n');
      assert.equal(sc.exit_code, 0);
    } finally {
      await s.terminate();
    }
    assert.ok(srv.alive, 'server alive');
  });
});
