/**
 * The floor: the shortest round trip any bridge of this shape can make. A tiny bench extension
 * (written to a temp dir) whose service worker keeps a WebSocket to a Bun server in this process;
 * each message goes service worker → chrome.runtime Port → ISOLATED content script → DOM
 * CustomEvent → MAIN-world listener, which answers back the same way. Same hops as a real
 * plugin call minus the OpenTabs server process and all product logic.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server, ServerWebSocket } from 'bun';

export interface Floor {
  extDir: string;
  /** Resolves when a content script's Port is connected in the service worker. */
  ready(timeoutMs: number): Promise<void>;
  /**
   * One round trip with a payload shaped like a real page-channel call. Round trips may overlap
   * (each waits for its own id), so `timeConcurrent` drives the floor with N in flight like the
   * product's throughput figures.
   */
  roundTrip(i: number): Promise<void>;
  stop(): void;
}

/** Build the extension (pages matching `match`, e.g. http://127.0.0.1/pages/index.html*) and start its WS server. */
export function startFloor(match: string): Floor {
  let sock: ServerWebSocket<unknown> | null = null;
  let portReady = false;
  /** Round trips waiting for their answer, by id. */
  const waiting = new Map<string, { resolve(): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>();
  const failAll = (e: Error) => {
    for (const w of waiting.values()) {
      clearTimeout(w.timer);
      w.reject(e);
    }
    waiting.clear();
  };
  const server: Server<unknown> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      if (srv.upgrade(req, { data: undefined })) return undefined;
      return new Response('floor', { status: 200 });
    },
    websocket: {
      open(ws) {
        sock = ws;
      },
      message(_ws, data) {
        const text = String(data);
        if (text === 'port-ready') portReady = true;
        else if (text === 'port-gone') portReady = false;
        else if (text === 'no-port') failAll(new Error('floor: no content script port'));
        else {
          // The answer's id, as the product's client reads its answer: one JSON parse.
          const id = (JSON.parse(text) as { id?: string }).id;
          const w = id === undefined ? undefined : waiting.get(id);
          if (!w) return;
          waiting.delete(id!);
          clearTimeout(w.timer);
          w.resolve();
        }
      },
      close(ws) {
        if (sock === ws) sock = null;
      },
    },
  });

  const extDir = mkdtempSync(join(tmpdir(), 'opentabs-floor-ext-'));
  writeFileSync(
    join(extDir, 'manifest.json'),
    JSON.stringify({
      manifest_version: 3,
      name: 'OpenTabs bench floor',
      version: '1.0.0',
      background: { service_worker: 'sw.js' },
      host_permissions: ['http://127.0.0.1/*'],
      content_scripts: [
        { matches: [match], js: ['isolated.js'], run_at: 'document_start' },
        { matches: [match], js: ['main.js'], run_at: 'document_start', world: 'MAIN' },
      ],
    }),
  );
  writeFileSync(
    join(extDir, 'sw.js'),
    `const WS_URL = 'ws://127.0.0.1:${server.port}/';
let port = null;
let ws = null;
function connect() {
  ws = new WebSocket(WS_URL);
  ws.onopen = () => { if (port) ws.send('port-ready'); };
  ws.onmessage = (e) => { if (port) port.postMessage(e.data); else ws.send('no-port'); };
  ws.onclose = () => setTimeout(connect, 200);
}
chrome.runtime.onConnect.addListener((p) => {
  if (p.name !== 'floor') return;
  port = p;
  p.onMessage.addListener((m) => { if (ws && ws.readyState === 1) ws.send(m); });
  p.onDisconnect.addListener(() => { if (port === p) { port = null; if (ws && ws.readyState === 1) ws.send('port-gone'); } });
  if (ws && ws.readyState === 1) ws.send('port-ready');
});
connect();
`,
  );
  writeFileSync(
    join(extDir, 'isolated.js'),
    `const p = chrome.runtime.connect({ name: 'floor' });
p.onMessage.addListener((m) => document.dispatchEvent(new CustomEvent('floor:in', { detail: m })));
document.addEventListener('floor:out', (e) => p.postMessage(e.detail));
`,
  );
  // The MAIN world parses the call and serializes a result, as an adapter minimally must.
  writeFileSync(
    join(extDir, 'main.js'),
    `globalThis.__floorCalls = 0;
document.addEventListener('floor:in', (e) => {
  globalThis.__floorCalls++; // proof (for the floor's test) that the MAIN world answered
  const call = JSON.parse(e.detail);
  document.dispatchEvent(new CustomEvent('floor:out', { detail: JSON.stringify({ type: 'result', id: call.id, plugin: call.plugin, ok: true, value: call.input }) }));
});
`,
  );

  return {
    extDir,
    async ready(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!(sock && portReady)) {
        if (Date.now() > deadline) throw new Error(`floor extension did not connect within ${timeoutMs} ms (ws ${sock ? 'up' : 'down'}, port ${portReady})`);
        await Bun.sleep(50);
      }
    },
    roundTrip(i) {
      return new Promise<void>((resolve, reject) => {
        if (!sock) return reject(new Error('floor WebSocket is not connected'));
        const id = `f${i}`;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('floor round trip timed out'));
        }, 10_000);
        waiting.set(id, { resolve, reject, timer });
        sock.send(JSON.stringify({ type: 'call', id, plugin: 'bench', tool: 'echo', input: { text: 'hi' }, config: {} }));
      });
    },
    stop() {
      server.stop(true);
    },
  };
}
