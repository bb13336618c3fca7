/**
 * `bun test/bench/page-tool-results-chromium.ts`: CPU ms of the extension's process (its service
 * worker) per page-tool (WebMCP) call returning 1 MB and 3.8 MB of text, in real headless Chromium
 * with the real extension (test/harness/browser.ts), called over REST one after the other; three
 * rounds of N calls each (env N, default 10). For comparing two builds: run it in two checkouts in
 * turn. test/bench/page-tool-result-worker.ts times the worker's code alone.
 */
import { startBrowserHarness } from '../harness/browser.ts';
import { cpuDuring, processGroups } from './lib/proc.ts';

const N = Number(process.env.N ?? 10);
const h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
try {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/index.html?ptbench'));
  const tabId = await h.tabIdOf(page);
  await h.srv.ctx.config.setOriginPermission(new URL(h.fixtureBase).origin, 'auto');
  await page.evaluate(() => {
    const tools = new Map<string, unknown>();
    const made = new Map<number, string>();
    const text = (bytes: number) => {
      let t = made.get(bytes);
      if (!t) {
        const parts: string[] = [];
        let n = 0;
        for (let i = 0; n < bytes; i++) { const l = `line ${i}: "quoted" text\twith a tab and a newline\n`; parts.push(l); n += l.length; }
        made.set(bytes, (t = parts.join('').slice(0, bytes)));
      }
      return t;
    };
    (navigator as any).modelContext = { registerTool: (t: { name: string }) => void tools.set(t.name, t), unregisterTool: (n: string) => void tools.delete(n) };
    (navigator as any).modelContext.registerTool({ name: 'big', description: 'Big text', inputSchema: { type: 'object', properties: { bytes: { type: 'number' } } }, execute: (a: { bytes: number }) => ({ content: [{ type: 'text', text: text(a.bytes) }] }) });
  });
  const name = `tab${tabId}_big`;
  for (let i = 0; i < 100; i++) {
    const r = await h.callTool(name, { bytes: 10 });
    if (r.status === 200) break;
    await Bun.sleep(200);
  }
  const groups = processGroups(process.pid);
  for (const bytes of [1_000_000, 3_800_000]) {
    for (let i = 0; i < 2; i++) await h.callTool(name, { bytes });
    const rounds: number[] = [];
    for (let round = 0; round < 3; round++) {
      const used = await cpuDuring(groups, async () => {
        for (let i = 0; i < N; i++) {
          const r = await h.callTool(name, { bytes });
          if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        }
      });
      rounds.push((used['chromium renderer (extensions)'] ?? 0) / N);
    }
    rounds.sort((a, b) => a - b);
    console.log(`${bytes} bytes: extension process CPU ms/call, 3 rounds of ${N}: ${rounds.map((x) => x.toFixed(1)).join(', ')} (median ${rounds[1]!.toFixed(1)})`);
  }
} finally {
  await h.stop();
}
