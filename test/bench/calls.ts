/**
 * `bun test/bench/calls.ts`: the per-call cost of a trivial plugin call only (sections 1–2 of
 * `npm run bench`, ≈ 30 s): the floor and `bench_echo` over REST, MCP full and the gateway, one
 * after the other and with 8 in flight, in a real headless Chromium with the real extension and
 * the server in its own process; MCP both through the official SDK client ("mcp") and as plain
 * HTTP ("mcpRaw", lib/mcp-raw.ts: the same server path without the client library). Made for comparing two builds: run it in two checkouts in turn
 * (interleaved), each prints one JSON line (`--json`) or a table.
 *
 * With 8 in flight it also prints whether the machine was CPU-bound (lib/machine.ts): how busy
 * all cores were, the bench's share, context switches per call and the busiest thread.
 *
 * Each round runs every figure once, in the same order, so a busy minute of the machine falls on
 * all of them; the figures are medians over the rounds.
 *
 * Env: BENCH_ROUNDS (default 3), BENCH_PROFILE=1 (CPU profile of the server, markdown, to
 * bench-results/), BENCH_PROFILE_EXT=1 (V8 CPU profiles of the extension's service worker, the
 * floor's and the page during sequential REST calls and floor round trips, to bench-results/), BENCH_SEQ (sequential calls per figure and round, default 300),
 * BENCH_CONCURRENT (calls per throughput figure and round, default 2,000), BENCH_VARIANT (parts of
 * the server switched off for cost attribution, as lib/server-child.ts `variant`; bench only),
 * BENCH_INTERLEAVE=N (instead of the rounds: N cycles of one call of each kind, in a new shuffled
 * order every cycle so each kind follows each other kind about equally often; prints p25/p50/p75 per
 * kind and each kind's p50 by the kind called just before it. A busy minute then falls on every
 * kind alike; a call made right after a floor round trip is slower than one after a product call,
 * so a fixed order would favour whichever kind never follows the floor).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { devtoolsTargets, profileTargets, summarizeSamples } from './lib/cdp-profile.ts';
import { startFloor } from './lib/floor.ts';
import { rawMcpCaller, rawMcpSession } from './lib/mcp-raw.ts';
import { buildBenchPlugin } from './lib/plugins.ts';
import { cpuDuring, processGroups, ROOT, startServerChild } from './lib/proc.ts';
import { machineDuring, type MachineWindow } from './lib/machine.ts';
import { BENCH_LIMITS, cleanup, cleanups, waitUntil } from './lib/plumbing.ts';
import { median, ms, summarize, table, timeConcurrent, timeSequential } from './lib/stats.ts';

const JSON_OUT = process.argv.includes('--json');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQ = Number(process.env.BENCH_SEQ ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 2000);
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_EXT = process.env.BENCH_PROFILE_EXT === '1';
const INTERLEAVE = Number(process.env.BENCH_INTERLEAVE ?? 0);
const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS_DIR = join(ROOT, 'bench-results');

const log = (s: string) => console.error(`[bench:calls] ${s}`);

type McpResult = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: unknown };

async function main(): Promise<void> {
  const load0 = loadavg()[0]!;
  const base = mkdtempSync(join(tmpdir(), 'opentabs-bench-calls-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  await ensureExtensionBuilt();
  const pages = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>bench</title><p>bench page</p>', { headers: { 'content-type': 'text/html' } }) });
  cleanups.push(() => pages.stop(true));
  const match = 'http://127.0.0.1/pages/index.html*';
  const benchDir = join(base, 'bench-plugin');
  await buildBenchPlugin(benchDir, match);
  const floor = startFloor(match);
  cleanups.push(() => floor.stop());
  cleanups.push(() => rmSync(floor.extDir, { recursive: true, force: true }));

  const cfg = join(base, 'config');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [benchDir], permissions: { bench: { default: 'auto' } }, pluginSettings: {} }));
  const profName = `server-calls-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`;
  const srv = await startServerChild(cfg, BENCH_LIMITS, PROFILE ? ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${RESULTS_DIR}`, `--cpu-prof-name=${profName}`] : []);
  cleanups.push(() => srv.stop());
  const health = async () => (await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json()) as any;

  const profile = mkdtempSync(join(tmpdir(), 'opentabs-bench-calls-chrome-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const extDir = join(cfg, 'extension');
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--disable-extensions-except=${extDir},${floor.extDir}`, `--load-extension=${extDir},${floor.extDir}`, '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...(PROFILE_EXT ? ['--remote-debugging-port=0'] : [])],
  });
  cleanups.push(() => context.close());
  await waitUntil(async () => (await health()).extensionConnected === true, 'the extension to connect', 30_000);
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${pages.port}/pages/index.html`);
  await waitUntil(async () => (await health()).pluginDetails?.find((p: { name: string }) => p.name === 'bench')?.tabState === 'ready', 'the bench tab to be ready', 30_000);
  await floor.ready(20_000);

  const mcp: Client = await connectMcp(srv.url, srv.secret, '/mcp', 'bench');
  const gw: Client = await connectMcp(srv.url, srv.secret, '/mcp/gateway', 'bench');
  cleanups.push(() => mcp.close());
  cleanups.push(() => gw.close());
  const rawMcp = rawMcpCaller(srv.url, await rawMcpSession(srv.url, srv.secret));
  const check = (v: unknown, via: string) => {
    if ((v as { text?: string })?.text !== 'hi') throw new Error(`${via}: bench_echo returned ${JSON.stringify(v)}`);
    return true;
  };
  let f = 0;
  const callers = {
    floor: async () => (await floor.roundTrip(++f), true),
    rest: async () => {
      const r = await fetch(`${srv.url}/tools/bench_echo/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: '{"arguments":{"text":"hi"}}' });
      const body = (await r.json()) as { result?: unknown };
      if (r.status !== 200) throw new Error(`REST ${r.status} ${JSON.stringify(body)}`);
      return check(body.result, 'REST');
    },
    mcp: async () => {
      const r = (await mcp.callTool({ name: 'bench_echo', arguments: { text: 'hi' } })) as McpResult;
      if (r.isError) throw new Error(`MCP ${JSON.stringify(r.content)}`);
      return check(r.structuredContent ?? JSON.parse(r.content?.[0]?.text ?? 'null'), 'MCP');
    },
    mcpRaw: async () => check((await rawMcp('bench_echo', '{"text":"hi"}')).structuredContent, 'MCP raw'),
    gateway: async () => {
      const r = (await gw.callTool({ name: 'opentabs_call', arguments: { tool: 'bench_echo', arguments: { text: 'hi' } } })) as McpResult;
      if (r.isError) throw new Error(`gateway ${JSON.stringify(r.content)}`);
      return check(r.structuredContent ?? JSON.parse(r.content?.[0]?.text ?? 'null'), 'gateway');
    },
  };
  type Via = keyof typeof callers;
  const vias = Object.keys(callers) as Via[];
  const p50 = Object.fromEntries(vias.map((v) => [v, [] as number[]])) as Record<Via, number[]>;
  const p90 = Object.fromEntries(vias.map((v) => [v, [] as number[]])) as Record<Via, number[]>;
  const at8: Record<string, number[]> = { floor: [], rest: [], mcp: [], mcpRaw: [] };
  const spans: number[] = [];
  const framesPerCall: number[] = [];
  if (process.env.BENCH_VARIANT) log(`server variant: ${JSON.stringify(await srv.command(`variant ${process.env.BENCH_VARIANT}`))}`);
  if (INTERLEAVE > 0) {
    await interleaved(callers, INTERLEAVE, load0);
    await mcp.close();
    await gw.close();
    await srv.stop();
    await cleanup();
    return;
  }
  const groups = processGroups(srv.pid);
  /** CPU ms per call by process group, at 8 in flight (medians over rounds). */
  const cpu: Record<string, Record<string, number[]>> = { floor: {}, rest: {}, mcp: {}, mcpRaw: {} };
  /** Whether each 8-in-flight window was CPU-bound (lib/machine.ts), one per round. */
  const machine: Record<string, MachineWindow[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    log(`round ${r + 1}/${ROUNDS}`);
    for (const via of vias) {
      if (via === 'rest') await srv.command('spans');
      if (via === 'rest') await srv.command('frames');
      const s = summarize(await timeSequential(SEQ, 50, callers[via]));
      if (via === 'rest') spans.push(summarize((await srv.command('spans')).spans as number[]).p50);
      if (via === 'rest') framesPerCall.push((await srv.command('frames')).framesIn / (SEQ + 50));
      p50[via].push(s.p50);
      p90[via].push(s.p90);
    }
    for (const via of ['floor', 'rest', 'mcp', 'mcpRaw'] as const) {
      const n = via === 'mcp' || via === 'mcpRaw' ? CONCURRENT / 2 : CONCURRENT;
      let c!: Awaited<ReturnType<typeof timeConcurrent>>;
      const { value: used, machine: m } = await machineDuring(groups, n, () => cpuDuring(groups, async () => (c = await timeConcurrent(n, 8, callers[via]))));
      (machine[via] ??= []).push(m);
      if (c.failed > 0) throw new Error(`${via} at 8 in flight: ${c.failed} calls failed`);
      at8[via]!.push(c.callsPerSec);
      for (const [g, msUsed] of Object.entries(used)) (cpu[via]![g] ??= []).push((msUsed / n) * 1000);
    }
  }
  if (PROFILE_EXT) {
    const targets = await devtoolsTargets(profile);
    const sw = targets.filter((t) => t.type === 'service_worker');
    const ours = sw.find((t) => t.url.endsWith('/background.js'));
    const floorSw = sw.find((t) => t.url.endsWith('/sw.js'));
    const tab = targets.find((t) => t.type === 'page' && t.url.endsWith('/pages/index.html'));
    if (!ours || !floorSw || !tab) throw new Error(`profile targets not found: ${JSON.stringify(targets.map((t) => [t.type, t.url]))}`);
    const n = SEQ * 2;
    const restMd = await profileTargets([{ label: 'extension service worker, bench_echo via REST', target: ours }, { label: 'page (bridge + adapter), bench_echo via REST', target: tab }], async () => (await timeSequential(n, 0, callers.rest), n));
    const floorMd = await profileTargets([{ label: 'floor service worker', target: floorSw }, { label: 'page, floor round trips', target: tab }], async () => (await timeSequential(n, 0, callers.floor), n));
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `ext-profile-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
    writeFileSync(file, `# Extension and page CPU profiles (sequential calls)\n\n${restMd}\n\n${floorMd}\n`);
    log(`wrote ${file}`);
  }
  await mcp.close();
  await gw.close();
  // Stop the server cleanly (SIGTERM) so a requested CPU profile gets written.
  await srv.stop();
  await cleanup();
  if (PROFILE) {
    const p = JSON.parse(readFileSync(join(RESULTS_DIR, profName), 'utf8'));
    const md = join(RESULTS_DIR, profName.replace(/\.cpuprofile$/, '.md'));
    writeFileSync(md, `# Server CPU profile (every call of this run)\n\n${summarizeSamples('server', p, 40)}\n`);
    log(`wrote ${md}`);
  }

  const out = {
    root: ROOT,
    rounds: ROUNDS,
    load: [Number(load0.toFixed(2)), Number(loadavg()[0]!.toFixed(2))],
    p50: Object.fromEntries(vias.map((v) => [v, median(p50[v])])),
    p90: Object.fromEntries(vias.map((v) => [v, median(p90[v])])),
    hubDispatchP50: median(spans),
    /** Frames the extension sent the server per REST call (1: the result). */
    extensionFramesPerCall: median(framesPerCall),
    callsPerSecAt8: Object.fromEntries(Object.entries(at8).map(([k, v]) => [k, median(v)])),
    /** CPU µs per call at 8 in flight, by process (clock ticks of 10 ms: coarse, summed over thousands of calls). */
    cpuUsPerCallAt8: Object.fromEntries(Object.entries(cpu).map(([via, g]) => [via, Object.fromEntries(Object.entries(g).map(([k, v]) => [k, Math.round(median(v))]))])),
    /** 8 in flight: all cores' busy share (every process), the bench's share, context switches per call, the busiest thread (medians over rounds; the thread of the median round). */
    machineAt8: Object.fromEntries(
      Object.entries(machine).map(([via, ws]) => {
        const byBusy = [...ws].sort((a, b) => a.busiestThread.core - b.busiestThread.core);
        return [via, { busy: median(ws.map((w) => w.busy)), ours: median(ws.map((w) => w.ours)), contextSwitchesPerCall: median(ws.map((w) => w.contextSwitchesPerCall)), busiestThread: byBusy[Math.floor(byBusy.length / 2)]!.busiestThread }];
      }),
    ),
    runs: { p50, at8 },
  };
  if (JSON_OUT) return void console.log(JSON.stringify(out));
  const fl = out.p50.floor!;
  console.log(
    table(
      ['bench_echo', 'p50 ms', 'p90 ms', '÷ floor p50', 'calls/s, 8 in flight'],
      vias.map((v) => [v === 'floor' ? 'floor (WS→SW→Port→page→back)' : `via ${v}`, ms(out.p50[v]!), ms(out.p90[v]!), v === 'floor' ? '' : `${(out.p50[v]! / fl).toFixed(2)}×`, at8[v] ? Math.round(out.callsPerSecAt8[v]!) : '']),
    ),
  );
  const groupNames = [...new Set(Object.values(out.cpuUsPerCallAt8).flatMap((g) => Object.keys(g)))].sort();
  console.log(
    table(
      ['CPU µs per call, 8 in flight', ...Object.keys(out.cpuUsPerCallAt8)],
      [...groupNames.map((g) => [g, ...Object.values(out.cpuUsPerCallAt8).map((x) => x[g] ?? '')]), ['all', ...Object.values(out.cpuUsPerCallAt8).map((x) => Object.values(x).reduce((a, b) => a + b, 0))]],
    ),
  );
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  console.log(
    table(
      [`8 in flight, ${cpus().length} cores`, ...Object.keys(out.machineAt8)],
      [
        ['cores busy (every process)', ...Object.values(out.machineAt8).map((m) => pct(m.busy))],
        ['… of which this bench', ...Object.values(out.machineAt8).map((m) => pct(m.ours))],
        ['context switches per call', ...Object.values(out.machineAt8).map((m) => m.contextSwitchesPerCall.toFixed(1))],
        ['busiest thread, % of a core', ...Object.values(out.machineAt8).map((m) => `${pct(m.busiestThread.core)} ${m.busiestThread.name}`)],
      ],
    ),
  );
  console.log(`hub.dispatch (server → extension → page → server) p50 ${ms(out.hubDispatchP50)} ms; ${out.extensionFramesPerCall.toFixed(2)} frames from the extension per call; load ${out.load.join(' → ')}; ${ROUNDS} rounds`);
}

/** BENCH_INTERLEAVE: one call of each kind per cycle, in a shuffled order (see the header). */
async function interleaved(callers: Record<string, () => Promise<unknown>>, cycles: number, load0: number): Promise<void> {
  const kinds = Object.keys(callers);
  for (let i = 0; i < 50; i++) for (const k of kinds) await callers[k]!();
  const all: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
  const after: Record<string, Record<string, number[]>> = Object.fromEntries(kinds.map((k) => [k, {}]));
  let prev = '';
  // A fixed-seed shuffle per cycle (xorshift32): every kind follows every other kind, in every position.
  let seed = 0x9e3779b9;
  const rand = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  for (let i = 0; i < cycles; i++) {
    const order = [...kinds];
    for (let j = order.length - 1; j > 0; j--) {
      const r = rand(j + 1);
      [order[j], order[r]] = [order[r]!, order[j]!];
    }
    for (const k of order) {
      const t0 = performance.now();
      await callers[k]!();
      const t = performance.now() - t0;
      all[k]!.push(t);
      if (prev) (after[k]![prev] ??= []).push(t);
      prev = k;
    }
  }
  const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))]!;
  const floor = q(all.floor!, 0.5);
  console.log(
    table(
      ['bench_echo, interleaved', 'p25 ms', 'p50 ms', 'p75 ms', '÷ floor p50', ...kinds.map((k) => `p50 after ${k}`)],
      kinds.map((k) => [k, ms(q(all[k]!, 0.25)), ms(q(all[k]!, 0.5)), ms(q(all[k]!, 0.75)), k === 'floor' ? '' : `${(q(all[k]!, 0.5) / floor).toFixed(2)}×`, ...kinds.map((p) => (after[k]![p] ? ms(q(after[k]![p]!, 0.5)) : ''))]),
    ),
  );
  console.log(`${cycles} cycles; load ${load0.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`);
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
