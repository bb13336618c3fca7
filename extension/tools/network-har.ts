/**
 * Records as the tools return them: a summary per request (with bodies while the per-result
 * budget lasts) and HAR 1.2 entries for browser_export_har.
 */
import { CAPTURE_BODY_MAX_BYTES, CAPTURE_RESULT_BODY_BUDGET_BYTES } from '../../server/protocol/limits.ts';
import { headerValue, type CapturedBody, type NetRecord } from './network-records.ts';

/** HAR-style phase durations in ms (-1 where a phase did not happen). */
export function timings(rec: NetRecord) {
  const total = rec.endTs !== undefined ? Math.max(0, (rec.endTs - rec.startTs) * 1000) : -1;
  const t = rec.response?.timing;
  if (!t) return { total, blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: 0, receive: Math.max(0, total) };
  const span = (a: number, b: number) => (a >= 0 && b >= 0 ? b - a : -1);
  const firstPhase = [t.dnsStart, t.connectStart, t.sendStart].find((x) => x >= 0) ?? 0;
  // Request start as Chrome measures it can precede requestTime (queueing): blocked covers it.
  const queued = Math.max(0, (t.requestTime - rec.startTs) * 1000);
  const end = rec.endTs !== undefined ? (rec.endTs - t.requestTime) * 1000 : t.receiveHeadersEnd;
  return {
    total,
    blocked: queued + firstPhase,
    dns: span(t.dnsStart, t.dnsEnd),
    connect: span(t.connectStart, t.connectEnd),
    ssl: span(t.sslStart, t.sslEnd),
    send: Math.max(0, span(t.sendStart, t.sendEnd)),
    wait: Math.max(0, span(t.sendEnd, t.receiveHeadersEnd)),
    receive: Math.max(0, end - t.receiveHeadersEnd),
  };
}

/** Hands out bodies until the per-result budget (results travel over the WebSocket) is spent. */
export function bodyBudget() {
  let left = CAPTURE_RESULT_BODY_BUDGET_BYTES;
  return (b: CapturedBody | undefined): CapturedBody | { omitted: string } | undefined => {
    if (!b) return undefined;
    if (b.text.length > left) return { omitted: 'over the size budget of one result; narrow with urlFilter or read with clear in batches' };
    left -= b.text.length;
    return b;
  };
}

export function summary(rec: NetRecord, take: ReturnType<typeof bodyBudget> | null) {
  const r = rec.response;
  return {
    requestId: rec.requestId,
    method: rec.method,
    url: rec.url,
    type: rec.type,
    state: rec.state,
    status: r?.status ?? null,
    statusText: r?.statusText ?? null,
    mimeType: r?.mimeType ?? null,
    startedAt: new Date(rec.wallTime).toISOString(),
    durationMs: rec.endTs !== undefined ? Math.round((rec.endTs - rec.startTs) * 1000 * 10) / 10 : null,
    timing: timings(rec),
    requestHeaders: rec.requestHeaders,
    responseHeaders: r?.headers ?? null,
    protocol: r?.protocol ?? null,
    remoteAddress: r?.remoteIPAddress ? `${r.remoteIPAddress}:${r.remotePort ?? ''}` : null,
    fromCache: r ? r.fromDiskCache === true || r.fromPrefetchCache === true : false,
    fromServiceWorker: r?.fromServiceWorker === true,
    encodedDataLength: rec.encodedDataLength ?? null,
    ...(rec.error ? { error: rec.error } : {}),
    ...(take
      ? {
          requestBody: take(rec.requestBody) ?? null,
          responseBody: take(rec.responseBody) ?? null,
          ...(rec.bodyError && !rec.responseBody ? { bodyError: rec.bodyError } : {}),
        }
      : {}),
  };
}

export const harHeaders = (h: Record<string, string> | undefined) =>
  Object.entries(h ?? {}).flatMap(([name, value]) => String(value).split('\n').map((v) => ({ name, value: v })));

export function harHttpVersion(protocol: string | undefined): string {
  if (!protocol) return 'HTTP/1.1';
  if (protocol === 'h2') return 'HTTP/2.0';
  if (protocol === 'h3') return 'HTTP/3.0';
  return protocol.toUpperCase();
}

/** One recorded request as a HAR 1.2 entry (http://www.softwareishard.com/blog/har-12-spec/). */
export function harEntry(rec: NetRecord, take: ReturnType<typeof bodyBudget>) {
  const r = rec.response;
  const t = timings(rec);
  let query: { name: string; value: string }[] = [];
  try {
    query = [...new URL(rec.url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {}
  const reqBody = take(rec.requestBody);
  const resBody = take(rec.responseBody);
  const content: Record<string, unknown> = { size: rec.responseBody?.size ?? rec.encodedDataLength ?? 0, mimeType: r?.mimeType ?? 'x-unknown' };
  if (resBody && 'text' in resBody) {
    content.text = resBody.text;
    if (resBody.base64Encoded) content.encoding = 'base64';
    if (resBody.truncated) content.comment = `truncated to ${CAPTURE_BODY_MAX_BYTES} bytes`;
  } else if (resBody) content.comment = resBody.omitted;
  return {
    startedDateTime: new Date(rec.wallTime).toISOString(),
    time: Math.max(0, t.total),
    request: {
      method: rec.method,
      url: rec.url,
      httpVersion: harHttpVersion(r?.protocol),
      cookies: [],
      headers: harHeaders(rec.requestHeaders),
      queryString: query,
      ...(reqBody && 'text' in reqBody ? { postData: { mimeType: headerValue(rec.requestHeaders, 'content-type') ?? '', text: reqBody.text, ...(reqBody.base64Encoded ? { comment: 'text is base64 (a binary body)' } : {}) } } : {}),
      headersSize: -1,
      bodySize: rec.requestBody?.size ?? 0,
    },
    response: {
      status: r?.status ?? 0,
      statusText: r?.statusText ?? (rec.error ?? ''),
      httpVersion: harHttpVersion(r?.protocol),
      cookies: [],
      headers: harHeaders(r?.headers),
      content,
      redirectURL: headerValue(r?.headers, 'location') ?? '',
      headersSize: -1,
      bodySize: rec.encodedDataLength ?? -1,
    },
    cache: {},
    timings: { blocked: t.blocked, dns: t.dns, connect: t.connect, ssl: t.ssl, send: t.send, wait: t.wait, receive: t.receive },
    ...(r?.remoteIPAddress ? { serverIPAddress: r.remoteIPAddress.replace(/^\[|\]$/g, '') } : {}),
    _resourceType: rec.type,
    ...(rec.error ? { _error: rec.error } : {}),
  };
}

