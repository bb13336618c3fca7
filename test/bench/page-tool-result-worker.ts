/**
 * `bun test/bench/page-tool-result-worker.ts`: the service worker's part of a large page-tool
 * (WebMCP) result, run in Bun with the worker's own code (PageTools, result-json.ts, the secret
 * scrub): a result message as the Port delivers it → the checked result → the JSON-RPC frame's
 * text as the socket sends it. Median ms and the JSON.stringify calls of 100 KB or more per
 * result, for 1 MB and 3.8 MB of text (the page-tool cap is 4 MB), and for 5 MB (over the cap:
 * refused).
 * Env: BENCH_N (results per figure, default 15). For V8 (the engine of Chrome's service worker)
 * rather than Bun's: `bun build test/bench/page-tool-result-worker.ts --target=node --outfile
 * /tmp/b.mjs && node /tmp/b.mjs`.
 */
import { result as rpcResult } from '../../server/protocol/jsonrpc.ts';

const N = Number(process.env.BENCH_N ?? 15);
(globalThis as Record<string, unknown>).chrome = {
  runtime: { id: 'ext' },
  webNavigation: { onCommitted: { addListener: () => {} } },
  tabs: { onRemoved: { addListener: () => {} } },
};
const { PageTools } = await import('../../extension/background/page-tools.ts');
const { spliceResults } = await import('../../extension/background/result-json.ts');
const { rememberSecret, withoutSecret } = await import('../../extension/background/own-secret.ts');
rememberSecret('ab'.repeat(32));

const listeners: ((m: unknown) => void)[] = [];
const port = {
  name: 'opentabs-page-tools',
  sender: { tab: { id: 1 }, frameId: 0, documentId: 'doc', url: 'http://127.0.0.1/app', id: 'ext' },
  onMessage: { addListener: (cb: (m: unknown) => void) => listeners.push(cb) },
  onDisconnect: { addListener: () => {} },
  postMessage: () => {},
  disconnect: () => {},
} as unknown as chrome.runtime.Port;
const tools = new PageTools({ connected: false, request: async () => ({ refused: [] }) } as never);
tools.attachPort(port);
for (const cb of listeners) cb({ type: 'tools', tools: [{ name: 'big', description: 'big', inputSchema: { type: 'object', properties: {} } }] });

let big = 0;
const real = JSON.stringify;
JSON.stringify = ((...a: Parameters<typeof JSON.stringify>) => {
  const s = real(...a);
  if (typeof s === 'string' && s.length >= 100_000) big++;
  return s;
}) as typeof JSON.stringify;

function text(bytes: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const line = `line ${i}: "quoted" text\twith a tab and a newline\n`;
    parts.push(line);
    n += line.length;
  }
  return parts.join('').slice(0, bytes);
}

let id = 0;
async function one(msgText: string): Promise<{ ms: number; big: number; frame: number }> {
  const d = `d${++id}`;
  const p = tools.dispatch({ dispatchId: d, plugin: 'page:http://127.0.0.1', tool: 'big', input: {}, tabId: 1 });
  const msg = JSON.parse(msgText.replace('"id":"ID"', `"id":"${d}"`)); // a fresh copy, as the Port delivers
  big = 0;
  const t0 = performance.now();
  for (const cb of listeners) cb(msg);
  let frame: string;
  try {
    frame = withoutSecret(spliceResults(rpcResult('s1', await p)));
  } catch (e) {
    frame = real({ error: (e as Error).message });
  }
  return { ms: performance.now() - t0, big, frame: frame.length };
}

const figures: Record<string, string> = {
  '1 MB': real({ type: 'result', id: 'ID', ok: true, value: { content: [{ type: 'text', text: text(1_000_000) }] } }),
  '3.8 MB (under the 4 MB cap)': real({ type: 'result', id: 'ID', ok: true, value: { content: [{ type: 'text', text: text(3_800_000) }] } }),
  '5 MB (over the cap: refused)': real({ type: 'result', id: 'ID', ok: true, value: { content: [{ type: 'text', text: text(5_000_000) }] } }),
};
for (const [name, msg] of Object.entries(figures)) {
  for (let i = 0; i < 3; i++) await one(msg);
  const runs: { ms: number; big: number; frame: number }[] = [];
  for (let i = 0; i < N; i++) runs.push(await one(msg));
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
  console.log(`${name}: median ${ms[Math.floor(N / 2)]!.toFixed(1)} ms, min ${ms[0]!.toFixed(1)} ms; JSON texts ≥ 100 KB made: ${runs[0]!.big}; frame ${runs[0]!.frame} chars`);
}
