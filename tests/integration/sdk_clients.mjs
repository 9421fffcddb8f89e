// The official SDK's clients for tests outside this folder (tests/e2b, tests/modal), which have no
// node_modules of their own: v1 (2025 protocol) over stdio and HTTP, v2 (2026) over HTTP.
export { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
export { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
