/**
 * `bun test/bench/page-footprint.ts`: what the page-tools observer (extension/bridge/page-tools-main.ts,
 * injected into every http(s) page) costs a page that never uses WebMCP: wall-clock ms for a page
 * script calling Object.defineProperty, then Reflect.defineProperty, 1,000,000 times (data
 * properties on a plain object, as frameworks do), in real headless Chromium with the real
 * extension and in the same Chromium without it, on the same page. Five rounds each, printed with
 * their median; nothing is asserted (a shared machine's timings vary). Env N: calls per round.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, startBrowserHarness } from '../harness/browser.ts';

const N = Math.min(Math.max(Number(process.env.N ?? 1_000_000), 1), 10_000_000);
const ROUNDS = 5;

/** ms per round of N calls of each function, in the page's own script. */
async function measure(page: Page): Promise<{ object: number[]; reflect: number[] }> {
  return page.evaluate(
    ({ n, rounds }) => {
      const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
      const time = (define: (o: object, k: string, d: PropertyDescriptor) => unknown) => {
        const out: number[] = [];
        for (let r = 0; r < rounds; r++) {
          const o = {};
          const t0 = performance.now();
          for (let i = 0; i < n; i++) define(o, keys[i & 7]!, { value: i, writable: true, configurable: true, enumerable: true });
          out.push(performance.now() - t0);
        }
        return out;
      };
      // Looked up at each call, as page code does.
      return { object: time((o, k, d) => Object.defineProperty(o, k, d)), reflect: time((o, k, d) => Reflect.defineProperty(o, k, d)) };
    },
    { n: N, rounds: ROUNDS },
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const line = (label: string, xs: number[]) => `${label}: ${xs.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(xs).toFixed(0)} ms, ${((median(xs) * 1e6) / N).toFixed(1)} ns/call)`;

const h = await startBrowserHarness();
const profile = mkdtempSync(join(tmpdir(), 'opentabs-footprint-'));
try {
  const url = h.fixtureUrl('/pages/index.html?footprint');
  const withExt = await h.context.newPage();
  await withExt.goto(url);
  const plain = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-extensions', '--no-first-run'] });
  try {
    const without = await plain.newPage();
    await without.goto(url);
    const a = await measure(without);
    const b = await measure(withExt);
    console.log(`${N} calls per round, ${ROUNDS} rounds`);
    console.log(line('Object.defineProperty, no extension  ', a.object));
    console.log(line('Object.defineProperty, with extension', b.object));
    console.log(line('Reflect.defineProperty, no extension  ', a.reflect));
    console.log(line('Reflect.defineProperty, with extension', b.reflect));
    const patched = await withExt.evaluate(() => Function.prototype.toString.call(Object.defineProperty).includes('[native code]'));
    console.log(`with extension, Object.defineProperty reads as native code: ${patched}`);
  } finally {
    await plain.close();
  }
} finally {
  await h.stop();
  rmSync(profile, { recursive: true, force: true });
}
