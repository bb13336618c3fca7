/**
 * The server as the bench's child process (so its RSS and CPU are its own):
 *   bun test/bench/lib/server-child.ts <configDir> [limitsJson]
 * Prints one JSON line {port, pid, secret} once start-up discovery is done; SIGTERM stops it.
 * Limits are raised only where the shipped ones would refuse the bench's own load
 * (1,000 MCP sessions, 32 calls in flight); every figure notes which limits were used.
 *
 * Cost attribution (bench only, never in the product): commands on stdin, one per line, answered
 * with one JSON line on stdout —
 *   variant <names>   comma list of: audit-nowait (write the audit line without holding the
 *                     response for it), no-invocation-notify (skip the tool.invocationStart/End
 *                     frames to the extension), invocation-start-after-dispatch (send
 *                     tool.invocationStart just after tool.dispatch instead of before),
 *                     no-memory-keeper (stop server/state/memory.ts's timer: no forced full
 *                     collections under load; for the rest of the run), or "none"
 *   frames            frames received from the extension since last asked
 *   spans             extension round-trip times (hub.dispatch: WS send → result) since last asked
 *   gc                full garbage collection, then {rss, heapUsed} (what is retained, not GC timing)
 */
import { createInterface } from 'node:readline';
import type { Limits } from '../../../server/limits.ts';
import { loadServer } from '../../../cli/server-bundle.ts';

// Loaded as `opentabs start` loads it: from the start-up bundle when it is fresh.
const { runForeground } = await loadServer();

const [configDir, limitsJson] = process.argv.slice(2);
if (!configDir) {
  console.error('usage: server-child.ts <configDir> [limitsJson]');
  process.exit(2);
}
let limits: Partial<Limits> = {};
try {
  limits = limitsJson ? (JSON.parse(limitsJson) as Partial<Limits>) : {};
} catch (e) {
  console.error(`bad limits JSON: ${(e as Error).message}`);
  process.exit(2);
}
const running = await runForeground({ port: 0, configDir, quiet: true, installExtension: true, limits });
await running.ready;

const { audit, hub } = running.ctx;
const record = audit.record.bind(audit);
const notify = hub.notify.bind(hub);
const dispatch = hub.dispatch.bind(hub);
let spans: number[] = [];
/** Bound on kept spans between two `spans` commands (the bench asks after a few hundred calls). */
const MAX_SPANS = 100_000;
// Always measured (a performance.now() pair per call is noise next to a WS round trip).
(hub as { dispatch: typeof dispatch }).dispatch = (req) => {
  const t0 = performance.now();
  const p = dispatch(req);
  p.then(() => spans.length < MAX_SPANS && spans.push(performance.now() - t0), () => {});
  return p;
};

/** Frames received from the extension since last asked (`frames`): what one call costs on the socket. */
let framesIn = 0;
const hubIn = hub as unknown as { onMessage: (ws: unknown, raw: unknown) => void };
const onMessage = hubIn.onMessage.bind(hub);
hubIn.onMessage = (ws, raw) => {
  framesIn++;
  onMessage(ws, raw);
};

function setVariant(names: string[]): void {
  // Not undone by a later variant: the keeper's timer is stopped for the rest of the run.
  if (names.includes('no-memory-keeper')) running.memory.stop();
  (audit as { record: typeof record }).record = names.includes('audit-nowait')
    ? (e) => {
        void record(e).catch(() => {});
        return Promise.resolve();
      }
    : record;
  const invocation = (m: string) => m === 'tool.invocationStart' || m === 'tool.invocationEnd';
  (hub as { notify: typeof notify }).notify = names.includes('no-invocation-notify')
    ? ((m, p) => (invocation(m) ? true : notify(m, p))) as typeof notify
    : names.includes('invocation-start-after-dispatch')
      ? // hub.dispatch sends tool.dispatch synchronously right after this call: a microtask puts
        // invocationStart behind it, so the extension starts the call before the side-panel note.
        (((m, p) => {
          if (m !== 'tool.invocationStart') return notify(m, p);
          queueMicrotask(() => notify(m, p));
          return true;
        }) as typeof notify)
      : notify;
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, arg = ''] = line.trim().split(/\s+/, 2);
  if (cmd === 'variant') {
    setVariant(arg === 'none' ? [] : arg.split(','));
    console.log(JSON.stringify({ variant: arg }));
  } else if (cmd === 'gc') {
    // A full collection first, so a reading shows what is retained rather than GC timing.
    Bun.gc(true);
    const m = process.memoryUsage();
    console.log(JSON.stringify({ gc: true, rss: m.rss, heapUsed: m.heapUsed }));
  } else if (cmd === 'frames') {
    console.log(JSON.stringify({ framesIn }));
    framesIn = 0;
  } else if (cmd === 'spans') {
    console.log(JSON.stringify({ spans }));
    spans = [];
  } else if (cmd) console.log(JSON.stringify({ error: `unknown command ${cmd}` }));
});

console.log(JSON.stringify({ port: running.port, pid: process.pid, secret: running.ctx.secret ?? '' }));
