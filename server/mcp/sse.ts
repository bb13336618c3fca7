/**
 * One Server-Sent Events stream (text/event-stream): JSON-RPC messages as `event: message`, a
 * comment first so the headers go out at once (Bun sends them with the first body bytes), and a
 * keep-alive comment every `keepAliveMs` so proxies and clients with read timeouts never see a
 * silent stream. Used for a session's GET stream, a POST's own stream, a legacy HTTP+SSE session
 * and the stateless revision's per-call streams.
 */
const encoder = new TextEncoder();

export class SseStream {
  readonly response: Response;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** Called once when the stream ends: closed here, or by the client going away. */
  onClose?: () => void;

  constructor(keepAliveMs: number, opts: { headers?: Record<string, string>; first?: string } = {}) {
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.controller = c;
        c.enqueue(encoder.encode(opts.first ?? ': stream open\n\n'));
        this.keepAlive = setInterval(() => this.write(': keepalive\n\n'), keepAliveMs);
      },
      cancel: () => this.end(false),
    });
    this.response = new Response(stream, {
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', ...opts.headers },
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private write(text: string): boolean {
    if (this.closed) return false;
    try {
      this.controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      this.end(false);
      return false;
    }
  }

  /** One JSON-RPC message (already serialized JSON allowed). False once the stream is gone. */
  send(message: unknown): boolean {
    return this.write(`event: message\ndata: ${typeof message === 'string' ? message : JSON.stringify(message)}\n\n`);
  }

  close(): void {
    this.end(true);
  }

  private end(closeController: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    if (closeController) {
      try {
        this.controller.close();
      } catch {}
    }
    this.onClose?.();
  }
}
