/**
 * The bench's own building blocks, checked for real: statistics, the plugins it generates (loaded
 * by the server's own loader / built by the plugin tooling), the server child and its commands,
 * and the floor round trip through a real Chromium into the page's MAIN world.
 *   bun test test/bench
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadPluginFolder } from '../../../server/plugins/load.ts';
import { startFloor } from './floor.ts';
import { buildBenchPlugin, writeSyntheticPlugins } from './plugins.ts';
import { rssOf, startServerChild } from './proc.ts';
import { median, medianSummary, percentile, summarize, table, timeConcurrent, timeSequential } from './stats.ts';

const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('stats', () => {
  test('nearest-rank percentiles, summaries and medians', () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted on purpose
    expect(percentile([...xs].sort((a, b) => a - b), 50)).toBe(50);
    const s = summarize(xs);
    expect(s).toMatchObject({ n: 100, p50: 50, p90: 90, p99: 99, min: 1, max: 100, mean: 50.5 });
    expect(summarize([]).p50).toBeNaN();
    expect(median([3, 1, 2])).toBe(2);
    const m = medianSummary([summarize([1, 2, 3]), summarize([10, 20, 30]), summarize([4, 5, 6])]);
    expect(m.p50).toBe(5);
    expect(m.n).toBe(9);
    expect(m.min).toBe(1);
    expect(m.max).toBe(30);
  });

  test('sequential timing runs warm-up untimed; concurrent runs exactly the bounded count and counts failures', async () => {
    const seen: number[] = [];
    const samples = await timeSequential(5, 2, async (i) => void seen.push(i));
    expect(samples).toHaveLength(5);
    expect(seen).toEqual([-1, -2, 0, 1, 2, 3, 4]);
    let active = 0;
    let maxActive = 0;
    const r = await timeConcurrent(50, 4, async (i) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await Bun.sleep(1);
      active--;
      if (i % 10 === 0) throw new Error('boom');
      return i % 5 !== 1;
    });
    expect(r.ok + r.failed).toBe(50);
    expect(r.failed).toBe(5 + 10); // 5 thrown (i % 10 == 0), 10 returned false (i % 5 == 1)
    expect(maxActive).toBe(4);
  });

  test('table aligns columns', () => {
    const t = table(['name', 'v'], [['a', 1], ['longer', 22]]).split('\n');
    expect(t).toHaveLength(4);
    expect(new Set(t.map((l) => l.length)).size).toBe(1);
    expect(t[3]).toBe('longer  22');
  });
});

describe('bench plugins', () => {
  test('synthetic plugins load with the server loader, 20 tools each', async () => {
    const [dir] = writeSyntheticPlugins(tempDir('bench-synth-'), 1, 20);
    const r = await loadPluginFolder(dir!, 'local');
    if (!r.ok) throw new Error(r.error);
    expect(r.plugin.name).toBe('synth0');
    expect(r.plugin.tools).toHaveLength(20);
    expect(r.plugin.tools[3]!.fullName).toBe('synth0_action_3');
  });

  test('the bench_echo plugin builds with the SDK tooling', async () => {
    const dir = tempDir('bench-echo-');
    const built = await buildBenchPlugin(dir, 'http://127.0.0.1/pages/index.html*');
    expect(built.tools).toEqual(['bench_echo']);
    const manifest = JSON.parse(readFileSync(built.toolsJsonPath, 'utf8'));
    expect(manifest.urlPatterns).toEqual(['http://127.0.0.1/pages/index.html*']);
    expect(manifest.tools[0].inputSchema.properties.text.type).toBe('string');
    expect(built.adapterBytes).toBeGreaterThan(0);
  }, 60_000);
});

describe('server child', () => {
  test('starts on a temp config dir, answers /health, variant/spans/gc commands, stops', async () => {
    const cfg = tempDir('bench-child-');
    writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {} }));
    const srv = await startServerChild(cfg, { pluginMaxConcurrency: 64 });
    try {
      const h = await (await fetch(`${srv.url}/health`, { headers: srv.auth })).json();
      expect(h.status).toBe('ok');
      expect(h.extensionConnected).toBe(false);
      expect(rssOf(srv.pid)).toBeGreaterThan(1024 * 1024);
      expect(await srv.command('variant audit-nowait,no-invocation-notify')).toEqual({ variant: 'audit-nowait,no-invocation-notify' });
      expect(await srv.command('spans')).toEqual({ spans: [] });
      const gc = await srv.command('gc');
      expect(gc.gc).toBe(true);
      expect(gc.heapUsed).toBeGreaterThan(0);
      expect(gc.rss).toBeGreaterThan(gc.heapUsed);
      expect((await srv.command('nonsense')).error).toContain('unknown command');
    } finally {
      await srv.stop();
    }
    expect(srv.proc.exitCode !== null || srv.proc.signalCode !== null).toBe(true);
  }, 60_000);
});

describe('floor', () => {
  test('round trips go through the service worker into the page MAIN world and back', async () => {
    const floor = startFloor('http://127.0.0.1/pages/*');
    dirs.push(floor.extDir);
    const pages = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>floor</title><p>floor page</p>', { headers: { 'content-type': 'text/html' } }) });
    const profile = tempDir('bench-floor-chrome-');
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--disable-extensions-except=${floor.extDir}`, `--load-extension=${floor.extDir}`, '--no-first-run'],
    });
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${pages.port}/pages/x.html`);
      await floor.ready(20_000);
      for (let i = 0; i < 30; i++) await floor.roundTrip(i);
      // Overlapping round trips (the floor's throughput figure): each resolves with its own answer.
      await Promise.all(Array.from({ length: 8 }, (_, i) => floor.roundTrip(100 + i)));
      // The MAIN-world listener counted every call (page.evaluate runs in the MAIN world).
      expect(await page.evaluate(() => (globalThis as unknown as { __floorCalls: number }).__floorCalls)).toBe(38);
    } finally {
      await context.close();
      pages.stop(true);
      floor.stop();
    }
  }, 60_000);
});
