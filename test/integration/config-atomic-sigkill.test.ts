/**
 * Atomic config writes under SIGKILL: a child bun process writes config.json as fast as it can
 * through ConfigStore; we kill it mid-storm (several rounds) and require a complete, parseable
 * config.json every time, with any leftover temp file never read as the config.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, utimesSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTempConfigDir, removeDir } from '../harness/server.ts';
import { ConfigStore } from '../../server/state/config.ts';

const CONFIG_MODULE = resolve(import.meta.dir, '../../server/state/config.ts');
const BUN = process.execPath;

let dir: string;
beforeAll(() => {
  dir = makeTempConfigDir('opentabs-crash-');
});
afterAll(() => removeDir(dir));

/** A config.json as the child writes it: complete and self-consistent, or this throws. */
function checkConfig(text: string): number {
  const cfg = JSON.parse(text); // throws on a torn write
  if (typeof cfg.counter !== 'number') throw new Error('counter missing');
  if (cfg.padding.length !== (cfg.counter * 7919) % 2000000) throw new Error(`padding does not match counter ${cfg.counter}`);
  if (cfg.localPlugins.length !== cfg.counter % 50) throw new Error(`localPlugins does not match counter ${cfg.counter}`);
  return cfg.counter;
}

/** The child: unbounded writes of a config whose size varies, each one a full document. */
const childScript = `
const { ConfigStore } = await import(${JSON.stringify(CONFIG_MODULE)});
const store = await ConfigStore.open(process.env.DIR);
let i = 0;
for (;;) {
  i++;
  await store.update((d) => {
    d.counter = i;
    d.padding = 'x'.repeat((i * 7919) % 2000000);
    d.localPlugins = Array.from({ length: i % 50 }, (_, k) => '/plugin/' + k);
  });
  if (i === 3) process.stdout.write('storming\\n');
}
`;

let reads = 0;

async function stormAndKill(round: number): Promise<void> {
  const child = spawn(BUN, ['-e', childScript], { env: { ...process.env, DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  try {
    // Wait until the child is writing (bounded), then let it run a little longer before the kill.
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`child never started writing: ${stderr}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        if (c.toString().includes('storming')) {
          clearTimeout(timer);
          res();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        rej(new Error(`child exited early (${code}): ${stderr}`));
      });
    });
    // Read config.json while the child rewrites it: with atomic renames no reader ever sees a
    // partial file. Bounded by count and by time.
    const until = Date.now() + 150 + round * 50;
    for (let n = 0; n < 2000 && Date.now() < until; n++) {
      checkConfig(readFileSync(join(dir, 'config.json'), 'utf8'));
      reads++;
      await Bun.sleep(0);
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

describe('config.json under SIGKILL', () => {
  test('every kill leaves a complete, parseable config.json', async () => {
    let lastCounter = 0;
    for (let round = 0; round < 6; round++) {
      await stormAndKill(round);
      const text = readFileSync(join(dir, 'config.json'), 'utf8');
      lastCounter = checkConfig(text);
      expect(lastCounter).toBeGreaterThanOrEqual(3);
      expect(JSON.parse(text).schemaVersion).toBeGreaterThan(0);
      // Only config.json and (possibly) temp files with the reserved name pattern exist.
      for (const name of readdirSync(dir)) expect(name === 'config.json' || /^\.config\.json\.[0-9a-f]+\.tmp$/.test(name)).toBe(true);
    }

    expect(reads).toBeGreaterThan(0);
    // A store opened after the crash reads config.json (not a temp file) and keeps its keys.
    const store = await ConfigStore.open(dir);
    expect(store.get().counter).toBe(lastCounter);
    const temps = readdirSync(dir).filter((n) => n.endsWith('.tmp'));
    // Stale temp files (older than a minute) are cleaned up on open; young ones are left alone.
    for (const t of temps) utimesSync(join(dir, t), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    await ConfigStore.open(dir);
    for (const t of temps) expect(existsSync(join(dir, t))).toBe(false);
  }, 120_000);
});
