/**
 * `opentabs audit` shows the newest 50 calls (the server keeps the last 500): when more match, a
 * line on stderr says how many there are and the commands that show them, with the filters given,
 * and each of those commands runs as printed and shows them. `--limit` past 500 without `--file`
 * names the `--file` command instead of only the range.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(90_000);

const TOTAL = 700;
let root: string;
let cfg: string;
let srv: TestServer;

beforeAll(async () => {
  root = tempDir('opentabs-ux-s21g-audit-');
  cfg = join(root, 'state');
  mkdirSync(cfg, { recursive: true });
  // 700 calls on disk, every 7th failed; the server's ring takes the last 500 when it opens.
  const lines: string[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + i * 1000).toISOString();
    const failed = i % 7 === 0;
    lines.push(
      JSON.stringify({
        timestamp: at,
        tool: 'browser_list_tabs',
        plugin: 'browser',
        success: !failed,
        durationMs: 3,
        ...(failed ? { error: { code: 'extension_not_connected', message: 'not connected' } } : {}),
      }),
    );
  }
  writeFileSync(join(cfg, 'audit.log'), `${lines.join('\n')}\n`);
  srv = await startTestServer({ configDir: cfg });
});

afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

const rows = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('2026-'));
const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** A suggested `opentabs audit …` line, run with the CLI (its OPENTABS_CONFIG_DIR=… and executable taken off). */
async function runSuggested(line: string) {
  const args = line.replace(/^OPENTABS_CONFIG_DIR=\S+ /, '').split(' ');
  const at = args.indexOf('audit');
  expect(at).toBeGreaterThanOrEqual(0);
  return runCli(args.slice(at).map((a) => a.replace(/^'(.*)'$/, '$1')), { configDir: cfg });
}

test('plain `opentabs audit`: the newest 50, and a line naming how many more and how to see them', async () => {
  const r = await runCli(['audit', '--port', String(srv.port)], { configDir: cfg });
  expect(r.code).toBe(0);
  expect(rows(r.stdout).length).toBe(50);
  expect(r.stderr).toContain(`(the newest 50 of ${TOTAL} calls;`);
  const [upTo500, all] = backticked(r.stderr);
  expect(upTo500).toEndWith(`audit --limit 500 --port ${srv.port}`);
  expect(all).toEndWith(`audit --file --limit ${TOTAL}`);
  expect((await runSuggested(upTo500!)).stdout.split('\n').filter((l) => l.startsWith('2026-')).length).toBe(500);
  const whole = await runSuggested(all!);
  expect(rows(whole.stdout).length).toBe(TOTAL);
  expect(whole.stderr).toBe('');
});

test('--limit 500 (all the server keeps): says the server keeps 500 and names the --file command', async () => {
  const r = await runCli(['audit', '--limit', '500', '--port', String(srv.port)], { configDir: cfg });
  expect(rows(r.stdout).length).toBe(500);
  expect(r.stderr).toContain(`(the newest 500 of ${TOTAL} calls: the server keeps the last 500;`);
  expect(backticked(r.stderr)).toEqual([expect.stringMatching(new RegExp(`audit --file --limit ${TOTAL}$`))]);
});

test('filters are carried into the suggested commands', async () => {
  const failed = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 7 === 0).length;
  const r = await runCli(['audit', '--success', 'false', '--limit', '5', '--port', String(srv.port)], { configDir: cfg });
  expect(rows(r.stdout).length).toBe(5);
  expect(r.stderr).toContain(`(the newest 5 of ${failed} calls;`);
  const suggested = backticked(r.stderr);
  expect(suggested.every((s) => s.includes('--success false'))).toBe(true);
  const last = await runSuggested(suggested.at(-1)!);
  expect(rows(last.stdout).length).toBe(failed);
  expect(rows(last.stdout).every((l) => l.includes('failed'))).toBe(true);
});

test('no line when every matching call is shown, nor with --json', async () => {
  const r = await runCli(['audit', '--file', '--limit', String(TOTAL)], { configDir: cfg });
  expect(rows(r.stdout).length).toBe(TOTAL);
  expect(r.stderr).toBe('');
  const json = await runCli(['audit', '--json', '--port', String(srv.port)], { configDir: cfg });
  expect(JSON.parse(json.stdout).length).toBe(50);
  expect(json.stderr).toBe('');
  const file = await runCli(['audit', '--file'], { configDir: cfg });
  expect(rows(file.stdout).length).toBe(50);
  expect(file.stderr).toContain(`(the newest 50 of ${TOTAL} calls;`);
  expect(backticked(file.stderr)[0]).toEndWith(`audit --file --limit ${TOTAL}`);
});

test('--limit past 500 without --file names the command that reads the whole log', async () => {
  const r = await runCli(['audit', '--limit', '600', '--port', String(srv.port)], { configDir: cfg });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('the server keeps the last 500 calls');
  const cmd = backticked(r.stderr).find((s) => s.includes('--file'))!;
  expect(cmd).toEndWith('audit --file --limit 600');
  expect(rows((await runSuggested(cmd)).stdout).length).toBe(600);
});

test('a filter that matches fewer calls than asked among the 500 the server keeps: the log on disk has more, and says so', async () => {
  const failed = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 7 === 0).length;
  const r = await runCli(['audit', '--success', 'false', '--limit', '200', '--port', String(srv.port)], { configDir: cfg });
  const shown = rows(r.stdout).length;
  expect(shown).toBeLessThan(failed);
  expect(r.stderr).toContain(`(the newest ${shown} of ${failed} calls: the server keeps the last 500;`);
  const cmd = backticked(r.stderr).at(-1)!;
  expect(cmd).toEndWith(`audit --success false --file --limit ${failed}`);
  expect(rows((await runSuggested(cmd)).stdout).length).toBe(failed);
});
