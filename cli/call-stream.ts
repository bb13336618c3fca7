/**
 * `opentabs tool call` over the streaming form of POST /tools/:name/call (NDJSON): progress and
 * approval events as they happen, then the outcome. Against a server that answers plain JSON
 * (no streaming), the answer is taken as the outcome.
 */
import { join } from 'node:path';
import { CliError } from './output.ts';
import { notRunningMessage, requireVerifiedServer, secretFor, type Target } from './server-client.ts';

export type CallEvent =
  | { type: 'progress'; progress: number; total?: number; message?: string }
  | { type: 'approval'; state: 'waiting'; id: string; expiresAt: number; timeoutMs: number; message: string }
  | { type: 'approval'; state: 'approved' | 'denied'; id: string }
  | { type: 'result'; result: unknown; images?: unknown[] }
  | { type: 'error'; status: number; error: { code: string; message: string; path?: string } };

export type CallOutcome = Extract<CallEvent, { type: 'result' | 'error' }>;

export async function streamToolCall(t: Target, name: string, body: unknown, onEvent: (e: CallEvent) => void): Promise<CallOutcome> {
  const secret = secretFor(t.configDir);
  if (secret) await requireVerifiedServer(t, secret);
  let res: Response;
  try {
    res = await fetch(`${t.url}/tools/${encodeURIComponent(name)}/call`, {
      method: 'POST',
      headers: { ...(secret ? { authorization: `Bearer ${secret}` } : {}), 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify(body),
    });
  } catch {
    throw new CliError(notRunningMessage(t));
  }
  if (res.status === 401) {
    throw new CliError(
      `The server on ${t.url} refused the secret from ${join(t.configDir, 'extension', 'auth.json')} (401). ` +
        'Is it running with a different config dir (OPENTABS_CONFIG_DIR)? If you rotated the secret, run `opentabs stop && opentabs start`.',
    );
  }
  if (!(res.headers.get('content-type') ?? '').includes('ndjson') || !res.body) return plainOutcome(res);
  let outcome: CallOutcome | null = null;
  let buffered = '';
  const decoder = new TextDecoder();
  const take = (line: string) => {
    if (line.trim() === '') return;
    let e: CallEvent;
    try {
      e = JSON.parse(line) as CallEvent;
    } catch {
      return;
    }
    if (e.type === 'result' || e.type === 'error') outcome = e;
    else onEvent(e);
  };
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      take(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  take(buffered);
  if (!outcome) throw new CliError(`The server on ${t.url} ended the call to ${name} without a result (did it stop?).`);
  return outcome;
}

async function plainOutcome(res: Response): Promise<CallOutcome> {
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {}
  if (res.ok && body && 'result' in body) return { type: 'result', result: body.result, ...(Array.isArray(body.images) ? { images: body.images } : {}) };
  const error = (body?.error as { code: string; message: string } | undefined) ?? { code: 'http_error', message: `HTTP ${res.status}: ${text.slice(0, 300)}` };
  return { type: 'error', status: res.status, error };
}
