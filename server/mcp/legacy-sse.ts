/**
 * The MCP HTTP+SSE transport of protocol revision 2024-11-05, for clients that only speak it
 * (the SDK's SSEClientTransport, `mcp-remote --transport sse-only`, older IDE builds):
 *   GET  <base>/sse                       → an SSE stream; its first event, `endpoint`, names
 *                                           <base>/messages?sessionId=<id>; every server message
 *                                           follows as an `event: message`.
 *   POST <base>/messages?sessionId=<id>   → one JSON-RPC message (or a batch) from the client;
 *                                           202 at once, the answer goes out on the stream.
 * The SDK's SSEServerTransport writes to a Node ServerResponse; this one builds a web Response,
 * which is what Bun and Hono hand out. The session ends when the stream closes.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const encoder = new TextEncoder();

export class LegacySseTransport implements Transport {
  readonly sessionId = crypto.randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private keepAlive: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  readonly response: Response;

  /** `messagesPath` is the POST endpoint's path (the session id is appended as a query). */
  constructor(messagesPath: string, keepAliveMs: number) {
    const endpoint = `${messagesPath}?sessionId=${this.sessionId}`;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        // The endpoint event also makes Bun send the headers at once.
        controller.enqueue(encoder.encode(`event: endpoint\ndata: ${endpoint}\n\n`));
        this.keepAlive = setInterval(() => this.write(': keepalive\n\n'), keepAliveMs);
      },
      cancel: () => {
        void this.close();
      },
    });
    this.response = new Response(stream, {
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' },
    });
  }

  private write(text: string): boolean {
    if (this.closed || !this.controller) return false;
    try {
      this.controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      void this.close();
      return false;
    }
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)) throw new Error('SSE stream closed');
  }

  /** Messages POSTed by the client (already parsed JSON); false when not JSON-RPC messages. */
  receive(body: unknown): boolean {
    const msgs = Array.isArray(body) ? body : [body];
    if (msgs.length === 0) return false;
    for (const m of msgs) if (typeof m !== 'object' || m === null || (m as { jsonrpc?: unknown }).jsonrpc !== '2.0') return false;
    for (const m of msgs) this.onmessage?.(m as JSONRPCMessage);
    return true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    try {
      this.controller?.close();
    } catch {}
    this.onclose?.();
  }
}
