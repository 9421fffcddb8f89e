// Bearer-token auth on /mcp paths and the refusal to start an unauthenticated non-loopback
// listener (§7 and §10 test_dashboard / test_cli of the reference).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startHttpServer, request, rawSession, rpc, initializeBody, connect, run, requireBinary, freePort,
  cleanupContainers, cid, ROOT_DOC, NON_LOOPBACK_ERROR, MSC_BIN,
} from './lib.mjs';

after(() => cleanupContainers());

const TOKEN = 'test-secret';

function assertUnauthorized(r, what) {
  assert.equal(r.status, 401, `${what}: status (body ${r.text.slice(0, 200)})`);
  assert.match(r.headers['www-authenticate'] ?? '', /^Bearer\b/, `${what}: WWW-Authenticate: Bearer`);
  assert.deepEqual(r.json, { error: 'unauthorized' }, `${what}: body`);
  assert.equal(r.headers['mcp-session-id'], undefined, `${what}: no session issued`);
}

for (const [how, flags, env] of [
  ['--auth-token', ['--auth-token', TOKEN], {}],
  ['KILNTAINERS_AUTH_TOKEN', [], { KILNTAINERS_AUTH_TOKEN: TOKEN }],
]) {
  describe(`token from ${how}`, () => {
    let srv;
    before(async () => { srv = await startHttpServer(flags, { env }); });
    after(async () => { await srv?.stop(); });

    it('/healthz and / are open', async () => {
      const h = await request(srv, { method: 'GET', path: '/healthz' });
      assert.equal(h.status, 200);
      assert.deepEqual(h.json, { status: 'ok' });
      const root = await request(srv, { method: 'GET', path: '/' });
      assert.equal(root.status, 200);
      assert.deepEqual(root.json, ROOT_DOC);
      const wrong = await request(srv, { method: 'GET', path: '/healthz', headers: { Authorization: 'Bearer wrong' } });
      assert.equal(wrong.status, 200, 'a wrong token does not matter on /healthz');
    });

    it('POST /mcp without a token → 401 {"error":"unauthorized"} + WWW-Authenticate: Bearer', async () => {
      assertUnauthorized(await request(srv, { body: initializeBody() }), 'no Authorization');
    });

    it('wrong tokens and schemes → 401', async () => {
      const cases = {
        'wrong token': 'Bearer wrong-secret',
        'token prefix': `Bearer ${TOKEN.slice(0, -1)}`,
        'token plus suffix': `Bearer ${TOKEN}x`,
        'empty token': 'Bearer ',
        'scheme only': 'Bearer',
        'Basic scheme': `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`,
        'Basic with the token': `Basic ${TOKEN}`,
        'token without scheme': TOKEN,
        'case-changed token': `Bearer ${TOKEN.toUpperCase()}`,
      };
      for (const [what, value] of Object.entries(cases)) {
        assertUnauthorized(await request(srv, { body: initializeBody(), headers: { Authorization: value } }), what);
      }
    });

    it('the right token → 200; the scheme is case-insensitive', async () => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        const r = await request(srv, { body: initializeBody(), headers: { Authorization: `${scheme} ${TOKEN}` } });
        assert.equal(r.status, 200, `${scheme}: ${r.text.slice(0, 200)}`);
        assert.ok(r.headers['mcp-session-id']);
      }
    });

    it('auth is checked before the session: a valid session id without the token → 401', async () => {
      const { session } = await rawSession(srv, { token: TOKEN });
      assertUnauthorized(await request(srv, { body: rpc('ping'), session }), 'valid session, no token');
      assertUnauthorized(await request(srv, { body: rpc('ping'), session, headers: { Authorization: 'Bearer nope' } }), 'valid session, wrong token');
      assertUnauthorized(await request(srv, { method: 'DELETE', session, json: false }), 'DELETE without token');
      const ok = await request(srv, { body: rpc('ping'), session, token: TOKEN });
      assert.equal(ok.status, 200, 'with the token');
      assertUnauthorized(await request(srv, { body: rpc('ping'), session: 'unknown-session' }), 'unknown session, no token');
      assertUnauthorized(await request(srv, { body: 'garbage' }), 'garbage, no token');
    });

    it('every path starting with /mcp needs the token (GET, DELETE, sub-paths)', async () => {
      const bad = [];
      const check = async (what, r) => {
        try { assertUnauthorized(r, what); } catch (e) { bad.push(`${what} → ${r.status} ${JSON.stringify(r.text.slice(0, 60))}`); }
      };
      await check('GET /mcp', await request(srv, { method: 'GET', json: false, headers: { Accept: 'text/event-stream' } }));
      await check('DELETE /mcp', await request(srv, { method: 'DELETE', json: false }));
      for (const p of ['/mcp/', '/mcp/x', '/mcpfoo', '/mcp?x=1']) {
        await check(`POST ${p}`, await request(srv, { path: p, body: initializeBody() }));
        await check(`GET ${p}`, await request(srv, { method: 'GET', path: p, json: false }));
      }
      assert.deepEqual(bad, [], 'paths starting with /mcp answered without 401');
    });

    it('the SDK client with the right token lists tools and runs a command; without it, connect fails', async () => {
      const s = await connect(srv, { token: TOKEN });
      try {
        const tools = await s.client.listTools();
        assert.ok(tools.tools.some((t) => t.name === 'terminal_execute'));
        const sc = await s.exec({ command: 'echo authed', computer_id: cid(`auth-${how === '--auth-token' ? 'flag' : 'env'}`) });
        assert.equal(sc.stdout, 'authed\n');
      } finally {
        await s.terminate();
      }
      await assert.rejects(() => connect(srv, { timeoutMs: 10000 }), /401|nauthorized/i);
      await assert.rejects(() => connect(srv, { token: 'wrong', timeoutMs: 10000 }), /401|nauthorized/i);
    });
  });
}

describe('--auth-token wins over KILNTAINERS_AUTH_TOKEN', () => {
  it('the flag token is the one accepted', async () => {
    const srv = await startHttpServer(['--auth-token', 'flag-token'], { env: { KILNTAINERS_AUTH_TOKEN: 'env-token' } });
    try {
      const f = await request(srv, { body: initializeBody(), token: 'flag-token' });
      assert.equal(f.status, 200);
      const e = await request(srv, { body: initializeBody(), token: 'env-token' });
      assert.equal(e.status, 401);
    } finally {
      await srv.stop();
    }
  });
});

describe('startup refusal for an unauthenticated non-loopback listener', () => {
  it('--host 0.0.0.0 without a token and without --allow-unauthenticated-http → exit 1 with the reference message', async () => {
    requireBinary();
    const port = await freePort();
    const env = { ...process.env };
    delete env.KILNTAINERS_AUTH_TOKEN;
    const r = await run(MSC_BIN, ['--transport', 'http', '--host', '0.0.0.0', '--port', String(port)], { env, timeoutMs: 15000 });
    assert.equal(r.code, 1, `exit code (signal ${r.signal}); stderr: ${r.stderr}`);
    assert.ok(r.stderr.includes(NON_LOOPBACK_ERROR), `stderr: ${r.stderr}`);
    assert.equal(r.stdout, '', 'nothing on stdout');
  });

  it('an empty KILNTAINERS_AUTH_TOKEN does not count as a token', async () => {
    const port = await freePort();
    const r = await run(MSC_BIN, ['--transport', 'http', '--host', '0.0.0.0', '--port', String(port)],
      { env: { ...process.env, KILNTAINERS_AUTH_TOKEN: '' }, timeoutMs: 15000 });
    assert.equal(r.code, 1, `exit code; stderr: ${r.stderr}`);
    assert.ok(r.stderr.includes(NON_LOOPBACK_ERROR), `stderr: ${r.stderr}`);
  });

  it('--host 0.0.0.0 --allow-unauthenticated-http starts and serves without a token', async () => {
    const srv = await startHttpServer(['--allow-unauthenticated-http'], { host: '0.0.0.0' });
    try {
      const r = await request(srv, { body: initializeBody() });
      assert.equal(r.status, 200, r.text);
    } finally {
      await srv.stop();
    }
  });

  it('--host 0.0.0.0 --auth-token starts and requires the token', async () => {
    const srv = await startHttpServer(['--auth-token', TOKEN], { host: '0.0.0.0' });
    try {
      assertUnauthorized(await request(srv, { body: initializeBody() }), '0.0.0.0 without token');
      const r = await request(srv, { body: initializeBody(), token: TOKEN });
      assert.equal(r.status, 200, r.text);
    } finally {
      await srv.stop();
    }
  });

  it('--host 0.0.0.0 with KILNTAINERS_AUTH_TOKEN starts', async () => {
    const srv = await startHttpServer([], { host: '0.0.0.0', env: { KILNTAINERS_AUTH_TOKEN: TOKEN } });
    try {
      const r = await request(srv, { body: initializeBody(), token: TOKEN });
      assert.equal(r.status, 200, r.text);
    } finally {
      await srv.stop();
    }
  });

  it('loopback binds need no token: 127.0.0.1, localhost', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const srv = await startHttpServer([], { host });
      try {
        const r = await request(srv, { body: initializeBody() });
        assert.equal(r.status, 200, `${host}: ${r.text}`);
      } finally {
        await srv.stop();
      }
    }
  });
});
