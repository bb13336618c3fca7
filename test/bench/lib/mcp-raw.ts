/**
 * MCP without the SDK client, for the benches: a session opened with plain fetch, and a caller
 * that sends tools/call with the headers the official SDK client sends on each POST (Accept,
 * Content-Type, Mcp-Session-Id, MCP-Protocol-Version, the bearer token) and parses the JSON
 * answer. Its calls take the same server path as the SDK client's, without the SDK's own work in
 * the bench process (a zod check of every message and of the result, its request bookkeeping):
 * next to the SDK client's figure it tells the server's part of an MCP call from the client
 * library's.
 */
const PROTOCOL = '2025-11-25';

type McpResult = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: unknown };

/** initialize + notifications/initialized; the headers every later POST of the session sends. */
export async function rawMcpSession(url: string, secret: string, path = '/mcp'): Promise<Record<string, string>> {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench-raw', version: '1' } } }),
  });
  await init.text();
  const sid = init.headers.get('mcp-session-id');
  if (!sid) throw new Error(`MCP raw initialize failed: ${init.status}`);
  const h = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': PROTOCOL };
  const note = await fetch(`${url}${path}`, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
  await note.text();
  return h;
}

/** A tools/call of `name` with `args` (JSON text) in the session: its result, or a throw for a JSON-RPC or tool error. */
export function rawMcpCaller(url: string, headers: Record<string, string>, path = '/mcp'): (name: string, argsJson: string) => Promise<McpResult> {
  let id = 0;
  return async (name, argsJson) => {
    const r = await fetch(`${url}${path}`, { method: 'POST', headers, body: `{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argsJson}}}` });
    const body = (await r.json()) as { result?: McpResult; error?: unknown };
    if (r.status !== 200 || !body.result || body.result.isError) throw new Error(`MCP raw ${name}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body.result;
  };
}
