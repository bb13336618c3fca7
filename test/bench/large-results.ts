/**
 * `bun test/bench/large-results.ts`: the cost of large results on their way out of the browser. A
 * plugin tool returning 1 MB and 5 MB of text, browser_get_page_html (≈ 2 MB) and browser_snapshot
 * of a large page, called over REST one after the other in a real headless Chromium with the real
 * extension and the server in its own process: p50 per call, and CPU ms per call of the
 * extension's process (its service worker), the page's renderer and the server. Made for
 * comparing two builds: run it in two checkouts in turn (interleaved); `--json` prints one line.
 *
 * Env: BENCH_ROUNDS (default 3), BENCH_N (calls per figure and round, default 12), BENCH_ROWS
 * (rows of the large page, default 8,000), BENCH_PROFILE_EXT=1 (V8 CPU profile of the extension's
 * service worker and of the page during the 5 MB plugin calls and browser_get_page_html, to
 * bench-results/).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { buildPlugin } from '../../plugins/tooling/build.ts';
import { devtoolsTargets, profileTargets } from './lib/cdp-profile.ts';
import { cpuDuring, processGroups, ROOT, startServerChild } from './lib/proc.ts';
import { BENCH_LIMITS, cleanup, cleanups, waitUntil } from './lib/plumbing.ts';
import { median, ms, summarize, table, timeSequential } from './lib/stats.ts';

const JSON_OUT = process.argv.includes('--json');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const N = Number(process.env.BENCH_N ?? 12);
const ROWS = Number(process.env.BENCH_ROWS ?? 8000);
const PROFILE_EXT = process.env.BENCH_PROFILE_EXT === '1';
const RESULTS_DIR = join(ROOT, 'bench-results');
const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';

const log = (s: string) => console.error(`[bench:large] ${s}`);
/** The figures this bench prints: the server, the extension's process, page renderers, Chrome's browser process. */
function coarse(used: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [g, v] of Object.entries(used)) {
    const k = g === 'server' ? 'server' : g === 'chromium renderer (extensions)' ? 'extension' : g === 'chromium renderer' ? 'page' : g === 'chromium browser' ? 'browser' : null;
    if (k) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

function pageHtml(rows: number): string {
  const body: string[] = [];
  for (let i = 0; i < rows; i++) {
    body.push(`<tr><td><a href="/item/${i}">Item ${i}</a></td><td>Description of item ${i}, with "quotes" &amp; more text to read</td><td><button>Buy ${i}</button></td></tr>`);
  }
  return `<!doctype html><title>large</title><h1>Large page</h1><table>${body.join('\n')}</table>`;
}

async function writePlugin(dir: string, urlPattern: string): Promise<void> {
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-large', version: '1.0.0', type: 'module' }));
  writeFileSync(
    join(dir, 'src', 'index.ts'),
    `import * as v from 'valibot';
import { definePlugin, defineTool } from '@opentabs/sdk';

const made = new Map<number, string>();
function textOf(bytes: number): string {
  let t = made.get(bytes);
  if (t === undefined) {
    const parts: string[] = [];
    let n = 0;
    for (let i = 0; n < bytes; i++) {
      const line = 'line ' + i + ': "quoted" text\\twith a tab and a newline\\n';
      parts.push(line);
      n += line.length;
    }
    t = parts.join('').slice(0, bytes);
    made.set(bytes, t);
  }
  return t;
}

const text = defineTool({
  name: 'text',
  description: 'Return that many characters of text.',
  input: v.object({ bytes: v.number() }),
  output: v.object({ text: v.string() }),
  handle: async (input) => ({ text: textOf(input.bytes) }),
});

export default definePlugin({
  name: 'large',
  displayName: 'Large',
  description: 'Bench plugin returning large results.',
  urlPatterns: [${JSON.stringify(urlPattern)}],
  isReady: () => true,
  tools: [text],
});
`,
  );
  await buildPlugin(dir, { reload: false, log: () => {} });
}

async function main(): Promise<void> {
  const load0 = loadavg()[0]!;
  const base = mkdtempSync(join(tmpdir(), 'opentabs-bench-large-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  await ensureExtensionBuilt();
  const html = pageHtml(ROWS);
  const pages = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(html, { headers: { 'content-type': 'text/html' } }) });
  cleanups.push(() => pages.stop(true));
  const pluginDir = join(base, 'large-plugin');
  await writePlugin(pluginDir, 'http://127.0.0.1/pages/index.html*');

  const cfg = join(base, 'config');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [pluginDir], permissions: { large: { default: 'auto' } }, pluginSettings: {} }));
  const srv = await startServerChild(cfg, BENCH_LIMITS);
  cleanups.push(() => srv.stop());
  const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;

  const profile = mkdtempSync(join(tmpdir(), 'opentabs-bench-large-chrome-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const extDir = join(cfg, 'extension');
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`, '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...(PROFILE_EXT ? ['--remote-debugging-port=0'] : [])],
  });
  cleanups.push(() => context.close());
  await waitUntil(async () => (await health()).extensionConnected === true, 'the extension to connect', 30_000);
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${pages.port}/pages/index.html`);
  await waitUntil(async () => (await health()).pluginDetails?.find((p: { name: string }) => p.name === 'large')?.tabState === 'ready', 'the large tab to be ready', 30_000);

  const call = async (tool: string, args: Record<string, unknown>): Promise<number> => {
    const r = await fetch(`${srv.url}/tools/${tool}/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${tool} ${r.status} ${text.slice(0, 300)}`);
    return text.length;
  };
  const tabs = (await (await fetch(`${srv.url}/tools/browser_list_tabs/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{}}' })).json()) as any;
  const tabId = (tabs.result?.tabs ?? tabs.result ?? []).find?.((t: { url?: string }) => t.url?.includes('/pages/index.html'))?.id;
  if (typeof tabId !== 'number') throw new Error(`no tab id in ${JSON.stringify(tabs).slice(0, 300)}`);

  const figures: Record<string, () => Promise<number>> = {
    'plugin 1 MB': () => call('large_text', { bytes: 1_000_000 }),
    'plugin 5 MB': () => call('large_text', { bytes: 5_000_000 }),
    browser_get_page_html: () => call('browser_get_page_html', { tabId, maxLength: 5_000_000 }),
    browser_snapshot: () => call('browser_snapshot', { tabId }),
  };
  const sizes: Record<string, number> = {};
  for (const [name, fn] of Object.entries(figures)) sizes[name] = await fn();
  log(`response sizes: ${JSON.stringify(sizes)}`);

  const groups = processGroups(srv.pid);
  const p50: Record<string, number[]> = {};
  const cpu: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    log(`round ${r + 1}/${ROUNDS}`);
    for (const [name, fn] of Object.entries(figures)) {
      let samples: number[] = [];
      const used = coarse(await cpuDuring(groups, async () => (samples = await timeSequential(N, 2, fn))));
      (p50[name] ??= []).push(summarize(samples).p50);
      for (const [g, v] of Object.entries(used)) ((cpu[name] ??= {})[g] ??= []).push(v / (N + 2));
    }
  }
  if (PROFILE_EXT) {
    const targets = await devtoolsTargets(profile);
    const sw = targets.find((t) => t.type === 'service_worker' && t.url.endsWith('/background.js'));
    const tab = targets.find((t) => t.type === 'page' && t.url.endsWith('/pages/index.html'));
    if (!sw || !tab) throw new Error(`profile targets not found: ${JSON.stringify(targets.map((t) => [t.type, t.url]))}`);
    const parts: string[] = [];
    for (const name of ['plugin 5 MB', 'browser_get_page_html']) {
      parts.push(await profileTargets([{ label: `extension service worker, ${name} via REST`, target: sw }, { label: `page, ${name} via REST`, target: tab }], async () => (await timeSequential(N, 0, figures[name]!), N), 200));
    }
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `ext-profile-large-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
    writeFileSync(file, `# Extension and page CPU profiles (large results, sequential calls)\n\n${parts.join('\n\n')}\n`);
    log(`wrote ${file}`);
  }
  await srv.stop();
  await cleanup();
  const out = {
    root: ROOT,
    rounds: ROUNDS,
    n: N,
    load: [Number(load0.toFixed(2)), Number(loadavg()[0]!.toFixed(2))],
    sizes,
    p50: Object.fromEntries(Object.entries(p50).map(([k, v]) => [k, median(v)])),
    cpuMsPerCall: Object.fromEntries(Object.entries(cpu).map(([k, g]) => [k, Object.fromEntries(Object.entries(g).map(([gg, v]) => [gg, Number(median(v).toFixed(1))]))])),
  };
  if (JSON_OUT) return void console.log(JSON.stringify(out));
  const groupNames = [...new Set(Object.values(out.cpuMsPerCall).flatMap((g) => Object.keys(g)))].sort();
  console.log(table(['figure', 'response bytes', 'p50 ms', ...groupNames.map((g) => `${g} CPU ms/call`)], Object.keys(figures).map((k) => [k, sizes[k]!, ms(out.p50[k]!), ...groupNames.map((g) => out.cpuMsPerCall[k]?.[g] ?? '')])));
  console.log(`load ${out.load.join(' → ')}; ${ROUNDS} rounds of ${N} calls`);
}

process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
try {
  await main();
  process.exit(0);
} catch (e) {
  console.error(`bench failed: ${(e as Error).stack ?? e}`);
  await cleanup();
  process.exit(1);
}
