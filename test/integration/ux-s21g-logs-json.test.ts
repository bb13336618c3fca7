/**
 * A server started with `opentabs start --background` writes its banner (plain text) into
 * server.log beside the JSON log lines: `opentabs logs --json` still prints one JSON object a line,
 * so `opentabs logs --json | jq` works after the first background start.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
let cfg: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s21g-logs-');
  cfg = join(root, 'state');
});
afterAll(async () => {
  try {
    await killPid(JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid);
  } catch {}
  removeDir(root);
});

test('logs --json after a background start: every line is a JSON object, the banner text kept', async () => {
  const start = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 90_000 });
  expect(start.code).toBe(0);
  const stop = await runCli(['stop'], { configDir: cfg });
  expect(stop.code).toBe(0);
  // The file itself holds plain text lines (the banner) among the JSON ones.
  const raw = readFileSync(join(cfg, 'server.log'), 'utf8').split('\n').filter((l) => l.trim());
  expect(raw.some((l) => !l.startsWith('{'))).toBe(true);

  const r = await runCli(['logs', '--json', '-n', '1000'], { configDir: cfg });
  expect(r.code).toBe(0);
  const lines = r.stdout.split('\n').filter((l) => l.trim());
  expect(lines.length).toBe(raw.length);
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(parsed.every((o) => o !== null && typeof o === 'object' && !Array.isArray(o))).toBe(true);
  expect(parsed.some((o) => o.event === 'listening')).toBe(true);
  const banner = parsed.find((o) => o.event === 'output' && typeof o.text === 'string' && o.text.startsWith('OpenTabs server listening on http://127.0.0.1:'));
  expect(banner).toMatchObject({ level: 'info', event: 'output' });
  // Without --json the text is shown as written.
  const plain = await runCli(['logs', '-n', '1000'], { configDir: cfg });
  expect(plain.stdout).toContain('OpenTabs server listening on http://127.0.0.1:');
});
