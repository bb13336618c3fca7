/**
 * POST /tools/:name/call as a stream, when the client asks for one (`Accept: text/event-stream`
 * or `Accept: application/x-ndjson`): the call's progress and approval state as they happen,
 * then the outcome, so a caller never waits in silence (`opentabs tool call` draws its status line
 * from this). Events, each one JSON object:
 *   {"type":"progress","progress":N,"total"?:N,"message"?:S}
 *   {"type":"approval","state":"waiting","id","expiresAt","timeoutMs","message"} / {"type":"approval","state":"approved"|"denied","id"}
 *   {"type":"result","result":…,"images"?:[…],"resources"?:[…]}            last, on success
 *   {"type":"error","status":N,"error":{code,message,…}}   last, on failure (same body as the JSON answer)
 * SSE sends each as `event: <type>` + `data: <json>`; NDJSON as one line each. The HTTP status is
 * 200 once the stream starts; closing it cancels the call, and so does not reading it: past
 * limits.streamMaxQueuedBytes of unread events the stream is ended.
 */
import type { ServerContext } from '../context.ts';
import { backedUp, BYTE_QUEUE } from '../mcp/sse.ts';
import { callTool, type CallContext } from '../tools/call.ts';

export type StreamFormat = 'sse' | 'ndjson';

/** The streaming format the Accept header asks for, or null for the plain JSON answer. */
export function streamFormat(accept: string | undefined): StreamFormat | null {
  if (!accept) return null;
  if (/\btext\/event-stream\b/i.test(accept)) return 'sse';
  if (/\bapplication\/x-ndjson\b/i.test(accept)) return 'ndjson';
  return null;
}

const CONTENT_TYPE: Record<StreamFormat, string> = {
  sse: 'text/event-stream; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

export function streamCall(ctx: ServerContext, format: StreamFormat, name: string, args: unknown, call: CallContext): Response {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  // The call ends with the request, and also when its client stops reading the stream.
  const ac = new AbortController();
  if (call.signal?.aborted) ac.abort();
  else call.signal?.addEventListener('abort', () => ac.abort(), { once: true });
  const emit = (event: { type: string } & Record<string, unknown>) => {
    if (!open) return;
    if (backedUp(controller, ctx.limits.streamMaxQueuedBytes)) {
      // Events pile up unread (a plugin may report progress without end): drop them, cancel the call.
      open = false;
      try {
        controller.error(new Error('the client did not read this stream'));
      } catch {}
      ac.abort();
      return;
    }
    const json = JSON.stringify(event);
    try {
      controller.enqueue(encoder.encode(format === 'sse' ? `event: ${event.type}\ndata: ${json}\n\n` : `${json}\n`));
    } catch {
      open = false;
    }
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      cancel() {
        open = false;
        ac.abort();
      },
    },
    BYTE_QUEUE,
  );
  void (async () => {
    const outcome = await callTool(ctx, name, args, {
      ...call,
      signal: ac.signal,
      onProgress: (p) => emit({ type: 'progress', progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }),
      onApproval: (e) => emit({ type: 'approval', ...e }),
    });
    if (outcome.ok) emit({ type: 'result', result: outcome.value === undefined ? null : outcome.value, ...(outcome.images ? { images: outcome.images } : {}), ...(outcome.resources ? { resources: outcome.resources } : {}) });
    else emit({ type: 'error', status: outcome.error.status, error: outcome.error.toBody() });
    if (open) {
      open = false;
      try {
        controller.close();
      } catch {}
    }
  })();
  return new Response(body, { headers: { 'content-type': CONTENT_TYPE[format], 'cache-control': 'no-store' } });
}
