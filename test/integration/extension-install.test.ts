/**
 * installExtension: copies the built extension into <configDir>/extension only when its content
 * changed, writes server.json {port}, never touches auth.json / adapters/, and removes files an
 * older extension version left behind.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installExtension } from '../../server/extension-install.ts';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import type { ServerContext } from '../../server/context.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fakeCtx(port: number): ServerContext {
  const configDir = mkdtempSync(join(tmpdir(), 'opentabs-install-'));
  dirs.push(configDir);
  return { configDir, port } as unknown as ServerContext;
}

describe('installExtension', () => {
  test('first install copies dist and writes server.json; a second one copies nothing', async () => {
    const dist = await ensureExtensionBuilt();
    const ctx = fakeCtx(43210);
    const first = await installExtension(ctx);
    expect(first).toEqual({ dir: join(ctx.configDir, 'extension'), copied: true });
    for (const f of ['manifest.json', 'background.js', 'tab-bridge.js', 'sidepanel.html', 'sidepanel.js', 'icon.png']) {
      expect(readFileSync(join(first.dir, f))).toEqual(readFileSync(join(dist, f)));
    }
    expect(existsSync(join(first.dir, '.build-info.json'))).toBe(false);
    expect(JSON.parse(readFileSync(join(first.dir, 'server.json'), 'utf8'))).toMatchObject({ port: 43210 });
    // How the side panel names the CLI in its hints: a command that runs here.
    expect(typeof JSON.parse(readFileSync(join(first.dir, 'server.json'), 'utf8')).cli).toBe('string');
    const second = await installExtension(ctx);
    expect(second.copied).toBe(false);
  });

  test("server.json's cli (the side panel's `<cli> start`, `<cli> stop`) names a config dir that is not the default, so it runs from any shell", async () => {
    const ctx = fakeCtx(43211);
    const before = process.env.OPENTABS_CONFIG_DIR;
    process.env.OPENTABS_CONFIG_DIR = ctx.configDir;
    let cli: string;
    try {
      const { dir } = await installExtension(ctx);
      cli = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')).cli;
    } finally {
      if (before === undefined) delete process.env.OPENTABS_CONFIG_DIR;
      else process.env.OPENTABS_CONFIG_DIR = before;
    }
    expect(cli.startsWith(`OPENTABS_CONFIG_DIR=${ctx.configDir} `)).toBe(true);
    // Run as the side panel would print it, from a shell without the variable: it reads that config dir.
    const env: Record<string, string> = { NO_COLOR: '1', PATH: process.env.PATH ?? '', HOME: ctx.configDir };
    const r = Bun.spawnSync(['sh', '-c', `${cli} status --json --port 1`], { env, timeout: 60_000 });
    expect(JSON.parse(r.stdout.toString())).toMatchObject({ running: false, configDir: ctx.configDir });
  });

  test('keeps auth.json and adapters/, drops stale files, follows the port', async () => {
    const ctx = fakeCtx(40001);
    const dir = join(ctx.configDir, 'extension');
    mkdirSync(join(dir, 'adapters'), { recursive: true });
    writeFileSync(join(dir, 'auth.json'), '{"secret":"keep-me"}');
    writeFileSync(join(dir, 'adapters', 'x-123.js'), '// adapter');
    writeFileSync(join(dir, 'old-version-file.js'), '// from an older extension');
    expect((await installExtension(ctx)).copied).toBe(true);
    expect(readFileSync(join(dir, 'auth.json'), 'utf8')).toBe('{"secret":"keep-me"}');
    expect(readFileSync(join(dir, 'adapters', 'x-123.js'), 'utf8')).toBe('// adapter');
    expect(existsSync(join(dir, 'old-version-file.js'))).toBe(false);
    // A restart on another port rewrites server.json without recopying.
    (ctx as { port: number }).port = 40002;
    expect((await installExtension(ctx)).copied).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8'))).toMatchObject({ port: 40002 });
  });

  test('an install whose recorded hash differs (another version) is replaced', async () => {
    const ctx = fakeCtx(40003);
    const { dir } = await installExtension(ctx);
    // The hash marker is the installer's dotfile; a different value means another version is installed.
    const markers = readdirSync(dir).filter((f) => f.startsWith('.'));
    expect(markers.length).toBe(1);
    writeFileSync(join(dir, markers[0]), 'hash of another version');
    writeFileSync(join(dir, 'background.js'), '// broken');
    expect((await installExtension(ctx)).copied).toBe(true);
    expect(readFileSync(join(dir, 'background.js'), 'utf8')).not.toBe('// broken');
  });
});
