/**
 * The recorded traffic a draft is made from, in one shape whatever it came from: the result of
 * browser_get_network_requests (with includeBodies), the REST answer wrapping it, or a HAR 1.2
 * file (browser_export_har, or any browser's "Save all as HAR").
 */
export interface Captured {
  method: string;
  url: string;
  status: number | null;
  mimeType: string | null;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  requestBody?: string;
  responseBody?: string;
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const lower = (h: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (Array.isArray(h)) for (const x of h) if (isObject(x) && typeof x.name === 'string') out[x.name.toLowerCase()] = String(x.value ?? '');
  if (isObject(h)) for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = String(v);
  return out;
};
const bodyText = (b: unknown): string | undefined => (isObject(b) && typeof b.text === 'string' ? b.text : typeof b === 'string' ? b : undefined);

export function parseCapture(data: unknown): Captured[] {
  if (isObject(data) && isObject(data.log) && Array.isArray(data.log.entries)) {
    return data.log.entries.filter(isObject).map((e) => {
      const req = (e.request ?? {}) as Json;
      const res = (e.response ?? {}) as Json;
      const content = (res.content ?? {}) as Json;
      return {
        method: String(req.method ?? 'GET').toUpperCase(),
        url: String(req.url ?? ''),
        status: typeof res.status === 'number' ? res.status : null,
        mimeType: typeof content.mimeType === 'string' ? content.mimeType : null,
        requestHeaders: lower(req.headers),
        responseHeaders: lower(res.headers),
        ...(isObject(req.postData) && typeof req.postData.text === 'string' ? { requestBody: req.postData.text } : {}),
        ...(typeof content.text === 'string' ? { responseBody: content.text } : {}),
      };
    });
  }
  const list = isObject(data) && Array.isArray(data.requests) ? data.requests : isObject(data) && isObject(data.result) && Array.isArray(data.result.requests) ? data.result.requests : Array.isArray(data) ? data : null;
  if (!list) throw new Error('not a capture: expected {"requests": [...]} from browser_get_network_requests, or a HAR file ({"log": {"entries": [...]}})');
  return list.filter(isObject).map((r) => ({
    method: String(r.method ?? 'GET').toUpperCase(),
    url: String(r.url ?? ''),
    status: typeof r.status === 'number' ? r.status : null,
    mimeType: typeof r.mimeType === 'string' ? r.mimeType : null,
    requestHeaders: lower(r.requestHeaders),
    responseHeaders: lower(r.responseHeaders),
    ...(bodyText(r.requestBody) !== undefined ? { requestBody: bodyText(r.requestBody)! } : {}),
    ...(bodyText(r.responseBody) !== undefined ? { responseBody: bodyText(r.responseBody)! } : {}),
  }));
}
