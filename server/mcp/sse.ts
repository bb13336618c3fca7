/**
 * One Server-Sent Events stream (text/event-stream): JSON-RPC messages as `event: message`, a
 * comment first so the headers go out at once (Bun sends them with the first body bytes), and a
 * keep-alive comment every `keepAliveMs` so proxies and clients with read timeouts never see a
 * silent stream. Used for a session's GET stream, a POST's own stream, a legacy HTTP+SSE session
 * and the stateless revision's per-call streams. What waits for a client that does not read is
 * bounded (`maxQueuedBytes`): past it the stream ends and its queue is dropped.
 */
import { STREAM_MAX_QUEUED_BYTES } from '../limits.ts';

const encoder = new TextEncoder();

/** A stream queue measured in bytes, holding nothing ahead of the reader: its desiredSize is minus the bytes not yet read. */
export const BYTE_QUEUE: QueuingStrategy<Uint8Array> = { highWaterMark: 0, size: (chunk) => chunk?.byteLength ?? 0 };

/**
 * Whether more than `max` bytes already wait in a BYTE_QUEUE stream for its client: then the
 * client is not reading, and the stream is to be ended rather than grow (one message, however
 * large, is always taken into a queue below the bound).
 */
export function backedUp(controller: ReadableStreamDefaultController<Uint8Array>, max: number): boolean {
  return -(controller.desiredSize ?? 0) > max;
}

export class SseStream {
  readonly response: Response;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  /** Called once when the stream ends: closed here, or by the client going away. */
  onClose?: () => void;

  private readonly maxQueuedBytes: number;

  constructor(keepAliveMs: number, opts: { headers?: Record<string, string>; first?: string; maxQueuedBytes?: number } = {}) {
    this.maxQueuedBytes = opts.maxQueuedBytes ?? STREAM_MAX_QUEUED_BYTES;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
          c.enqueue(encoder.encode(opts.first ?? ': stream open\n\n'));
          this.keepAlive = setInterval(() => this.write(': keepalive\n\n'), keepAliveMs);
        },
        cancel: () => this.end(false),
      },
      BYTE_QUEUE,
    );
    this.response = new Response(stream, {
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', ...opts.headers },
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private write(text: string): boolean {
    if (this.closed) return false;
    if (backedUp(this.controller, this.maxQueuedBytes)) {
      // The client stopped reading: end the stream and let go of what it would not take.
      try {
        this.controller.error(new Error('the client did not read this stream'));
      } catch {}
      this.end(false);
      return false;
    }
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
