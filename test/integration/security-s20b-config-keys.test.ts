/**
 * `opentabs config set permission.<…>` saved a permission for a plugin or tool that does not
 * exist, with a note on stderr: a typo (permission.mial auto) left the real plugin asking while the
 * user believed it allowed, and the permission waited for whatever package of that name was added
 * later. A page tool's name (permission.tab5_x) was saved as a plugin "tab5" that can never exist.
 * Each is refused now, naming the known plugins, tools or the page origin key, and nothing is saved.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);
let root: string;
let cfg: string;

const configText = () => readFileSync(join(cfg, 'config.json'), 'utf8');

beforeAll(() => {
  root = tempDir('opentabs-s20b-keys-');
  cfg = join(root, 'config');
  const mail = writeTestPlugin(join(root, 'plugins'), 'mail', [{ name: 'send' }, { name: 'read' }]);
  writeTestConfig(cfg, { localPlugins: [mail] });
});

afterAll(() => removeDir(root));

const set = (key: string, value = 'auto') => runCli(['config', 'set', key, value], { configDir: cfg, timeoutMs: 60_000 });

test('a page tool\'s name is refused, pointing at pageOrigin.<origin>', async () => {
  const before = configText();
  for (const key of ['permission.tab5_x', 'permission.tab5', 'permission.tab12.delete_all']) {
    const r = await set(key);
    expect({ key, code: r.code }).toEqual({ key, code: 2 });
    expect(r.stderr).toContain('names a tool a web page offers in tab');
    expect(r.stderr).toContain('pageOrigin.<origin> off|ask|auto');
  }
  expect(configText()).toBe(before);
});

test('a mistyped plugin or tool is refused, naming the close and the known ones; nothing is saved', async () => {
  const before = configText();
  const plugin = await set('permission.mial');
  expect(plugin.code).toBe(2);
  expect(plugin.stderr).toContain('no plugin named "mial" is installed or added. Did you mean permission.mail?');
  expect(plugin.stderr).toContain('Known plugins: mail');
  const tool = await set('permission.mail.sned');
  expect(tool.code).toBe(2);
  expect(tool.stderr).toContain('plugin mail has no tool "sned". Did you mean permission.mail.send?');
  expect(tool.stderr).toContain('Its tools: send, read');
  const full = await set('permission.mail_delete_all');
  expect(full.code).toBe(2);
  expect(full.stderr).toContain('plugin mail has no tool "delete_all"');
  expect(configText()).toBe(before);
});

test('the plugin and tool that exist are saved', async () => {
  expect((await set('permission.mail.send', 'ask')).code).toBe(0);
  expect((await set('permission.mail', 'auto')).code).toBe(0);
  const perms = (JSON.parse(configText()) as { permissions: Record<string, { default?: string; tools?: Record<string, string> }> }).permissions;
  expect(perms.mail).toEqual({ default: 'auto', tools: { send: 'ask' } });
});
