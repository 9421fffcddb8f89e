// MCP over stdio at the wire level: initialize for every supported protocol version, ping,
// tools/list (exactly terminal_execute and its schema), resources/list, unknown methods,
// notifications, and the SDK handshake. No container is created here.
// Reference: §1, §2, §2.1, §10 test_e2e_mcp (initialize/list part).

import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { RawServer, startServer, TOOL, cleanupContainers } from './lib.mjs';

after(() => cleanupContainers());

describe('initialize', () => {
  for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
    it(`protocol version ${v} is accepted and echoed`, async () => {
      const s = new RawServer();
      try {
        const r = await s.initialize(v);
        assert.equal(r.jsonrpc, '2.0');
        assert.ok(r.result, JSON.stringify(r));
        assert.equal(r.result.protocolVersion, v);
        assert.equal(r.result.serverInfo?.name, 'Kilntainers');
        assert.equal(typeof r.result.serverInfo?.version, 'string');
        assert.ok(r.result.capabilities?.tools, 'tools capability');
        const p = await s.ping();
        assert.deepEqual(p.result, {});
        assert.deepEqual(s.badLines, [], 'stdout carries JSON-RPC lines only');
      } finally {
        const ex = await s.close();
        assert.equal(ex?.code, 0, `clean exit on EOF, stderr: ${s.stderrText.slice(-500)}`);
      }
    });
  }

  it('an unknown protocol version is answered with a supported one', async () => {
    const s = new RawServer();
    try {
      const r = await s.initialize('1999-01-01');
      assert.ok(r.result, JSON.stringify(r));
      assert.ok(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'].includes(r.result.protocolVersion), r.result.protocolVersion);
    } finally {
      await s.close();
    }
  });

  it('SDK client (latest protocol) connects; server version and capabilities are exposed', async () => {
    const s = await startServer();
    try {
      assert.equal(s.client.getServerVersion()?.name, 'Kilntainers');
      assert.ok(s.client.getServerCapabilities()?.tools);
      await s.client.ping();
      assert.deepEqual(s.transportErrors, []);
    } finally {
      await s.close();
    }
  });
});

describe('tools/list and resources/list', () => {
  it('exactly one tool by default: terminal_execute with the §2.1 schema', async () => {
    const s = new RawServer();
    try {
      await s.initialize('2025-06-18');
      const r = await s.request('tools/list', {});
      const tools = r.result?.tools;
      assert.ok(Array.isArray(tools), JSON.stringify(r));
      assert.deepEqual(tools.map((t) => t.name), [TOOL, 'computer_release']);
      const t = tools[0];
      assert.equal(typeof t.description, 'string');
      assert.ok(t.description.length > 20);
      const sch = t.inputSchema;
      assert.equal(sch.type, 'object');
      const props = sch.properties;
      for (const k of ['command', 'args', 'stdin', 'working_directory', 'timeout', 'computer_id', 'temporary']) {
        assert.ok(props[k], `property ${k}`);
      }
      assert.equal(props.command.type, 'string');
      assert.equal(props.args.type, 'array');
      assert.equal(props.args.items?.type, 'string');
      assert.equal(props.stdin.type, 'string');
      assert.equal(props.working_directory.type, 'string');
      assert.equal(props.timeout.type, 'integer');
      assert.equal(props.computer_id.type, 'string');
      assert.equal(props.temporary.type, 'boolean');
      assert.equal(props.temporary.default, true);
      assert.ok(!sch.required || sch.required.length === 0, 'no required properties');
      assert.equal(t.outputSchema, undefined, 'no outputSchema');
      assert.deepEqual(s.badLines, []);
    } finally {
      await s.close();
    }
  });

  it('resources/list answers with a resources array', async () => {
    const s = new RawServer();
    try {
      await s.initialize();
      const r = await s.request('resources/list', {});
      assert.ok(r.result, JSON.stringify(r));
      assert.ok(Array.isArray(r.result.resources));
    } finally {
      await s.close();
    }
  });
});

describe('JSON-RPC plumbing', () => {
  it('unknown method → -32601, server keeps serving', async () => {
    const s = new RawServer();
    try {
      await s.initialize();
      const r = await s.request('no/such/method', {});
      assert.equal(r.error?.code, -32601, JSON.stringify(r));
      assert.equal(typeof r.error.message, 'string');
      await s.ping();
    } finally {
      await s.close();
    }
  });

  it('string ids are echoed back unchanged', async () => {
    const s = new RawServer();
    try {
      await s.initialize();
      const r = await s.request('ping', undefined, { id: 'abc-123' });
      assert.equal(r.id, 'abc-123');
      assert.deepEqual(r.result, {});
    } finally {
      await s.close();
    }
  });

  it('notifications (even unknown ones) get no response', async () => {
    const s = new RawServer();
    try {
      await s.initialize();
      const before = s.lines.length;
      await s.notify('notifications/whatever', { x: 1 });
      await s.notify('notifications/cancelled', { requestId: 99999, reason: 'none' });
      const p = await s.request('ping', undefined, { id: 'after-notify' });
      assert.deepEqual(p.result, {});
      const newLines = s.messages.slice(before);
      assert.equal(newLines.length, 1, `only the ping response was written: ${JSON.stringify(s.lines.slice(before))}`);
    } finally {
      await s.close();
    }
  });

  it('requests are answered with their own ids when several are pipelined', async () => {
    const s = new RawServer();
    try {
      await s.initialize();
      const ids = [1, 2, 3, 4, 5, 6, 7, 8];
      await s.write(ids.map((id) => JSON.stringify({ jsonrpc: '2.0', id, method: id % 2 ? 'ping' : 'tools/list' }) + '\n').join(''));
      for (const id of ids) {
        const r = await s.response(id);
        assert.ok(r.result, JSON.stringify(r));
        if (id % 2 === 0) assert.equal(r.result.tools[0].name, TOOL);
      }
    } finally {
      await s.close();
    }
  });
});
