/**
 * `opentabs plugin build` type-checks first: a type error that esbuild would bundle without a
 * word stops the build (nothing written to dist/), names file, line and TS code, and suggests a
 * runnable command that builds without the check.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPlugin } from '../../plugins/tooling/index.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);
let root: string;
let cfg: string;

beforeAll(() => {
  root = tempDir('opentabs-typecheck-');
  cfg = join(root, 'state');
});
afterAll(() => removeDir(root));

/** The backticked command in a message, split into words (single-quoted words allowed). */
function suggestedCommand(text: string): string[] {
  const m = /`([^`]+--no-typecheck)`/.exec(text);
  if (!m) throw new Error(`no --no-typecheck command in: ${text}`);
  return [...m[1]!.matchAll(/'([^']*)'|(\S+)/g)].map((w) => w[1] ?? w[2]!);
}

describe('plugin build type-checks', () => {
  test('a clean scaffold passes the check and builds', async () => {
    const { dir } = await createPlugin('clean', join(root, 'clean'));
    const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 110_000 });
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
    expect(r.stderr).toContain('Type check passed');
    expect(existsSync(join(dir, 'dist/tools.json'))).toBe(true);
  });

  test('a type error stops the build before anything is written, naming where it is', async () => {
    const { dir } = await createPlugin('broken', join(root, 'broken'));
    const src = join(dir, 'src/index.ts');
    writeFileSync(src, `${readFileSync(src, 'utf8')}\nexport const count: number = 'not a number';\n`);
    const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 110_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Type check failed (1 error)');
    expect(r.stderr).toMatch(/src\/index\.ts\(\d+,\d+\): error TS2322/);
    expect(existsSync(join(dir, 'dist'))).toBe(false);

    // The command the failure suggests runs as printed and builds without the check (its leading
    // VAR=value words, such as the config dir, are its environment).
    const words = suggestedCommand(r.stderr);
    const env: Record<string, string> = {};
    while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? '')) {
      const w = words.shift()!;
      env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
    }
    const [exe, ...args] = words;
    const skip = await runCli(args, { configDir: env.OPENTABS_CONFIG_DIR ?? cfg, env, exe: [exe!], timeoutMs: 110_000 });
    expect({ code: skip.code, stderr: skip.stderr }).toMatchObject({ code: 0 });
    expect(skip.stderr).not.toContain('Type check');
    expect(existsSync(join(dir, 'dist/adapter.js'))).toBe(true);
  });

  test('without a tsconfig.json the check is skipped and says why', async () => {
    const { dir } = await createPlugin('notsconfig', join(root, 'notsconfig'));
    rmSync(join(dir, 'tsconfig.json'));
    const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 110_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Type check skipped: no tsconfig.json in the plugin folder');
  });
});
