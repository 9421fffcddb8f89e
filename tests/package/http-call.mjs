// http-call.mjs PORT: one MCP session over Streamable HTTP at http://127.0.0.1:PORT/mcp:
// initialize, one terminal_execute, DELETE; prints the computer's id (deb-image.sh).
const u = `http://127.0.0.1:${process.argv[2]}/mcp`;
const H = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const post = (body, sid) => fetch(u, { method: 'POST', headers: sid ? { ...H, 'Mcp-Session-Id': sid } : H,
  body: JSON.stringify(body) });
const r = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25',
  capabilities: {}, clientInfo: { name: 'deb-image', version: '1' } } });
const sid = r.headers.get('mcp-session-id');
if (!sid) { console.error(r.status, await r.text()); process.exit(1); }
const c = await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'terminal_execute',
  arguments: { command: 'echo ok; cat /etc/debian_version' } } }, sid)).json();
const s = c.result?.structuredContent;
if (s?.exit_code !== 0 || !s.stdout.startsWith('ok\n')) { console.error(JSON.stringify(c)); process.exit(1); }
console.log(s.computer_id);
const d = await fetch(u, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
if (d.status !== 200) { console.error('DELETE', d.status); process.exit(1); }
