/**
 * Tools a web page registers are named `tab<tab id>_<name>`. A plugin named `tab<digits>` would
 * name its tools the same way, so the name is refused where a plugin name is checked: by
 * `opentabs plugin create` (a usage error, nothing written), by the build's manifest check, and by
 * server plugin discovery (the folder fails, named, saying why). Names that only start like it
 * (`tab`, `tabs`, `tab-5`, `table5`) stay allowed.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';
import { buildPlugin, createPlugin, PluginBuildError } from '../../plugins/tooling/index.ts';
import { discoverPlugins } from '../../server/plugins/discover.ts';
import { parseToolsJson, reservedPluginName } from '../../server/protocol/plugin-manifest.ts';
import { ADAPTER_HASH_PLACEHOLDER } from '../../server/protocol/page-channel.ts';

// CLI processes, a plugin build and discovery on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const root = tempDir('opentabs-s18j-tab-names-');
afterAll(() => removeDir(root));

const manifest = (name: string) => ({
  name,
  displayName: 'T',
  description: 'Tab-like name',
  version: '1.0.0',
  urlPatterns: ['https://t.example.com/*'],
  tools: [{ name: 'ping', description: 'Ping', inputSchema: { type: 'object', properties: {} } }],
});

describe('tab<digits> plugin names', () => {
  test('the manifest check refuses tab<digits>, saying why; look-alike names pass', () => {
    for (const name of ['tab5', 'tab0', 'tab123456']) {
      const r = parseToolsJson(manifest(name));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toBe(`name: "${name}" is reserved: tools a web page registers are named tab<tab id>_*, the form of ${name}_*; pick another plugin name`);
    }
    for (const name of ['tab', 'tabs', 'tab-5', 'table5', 'tab5x', 'my-tab5']) {
      expect({ name, ok: parseToolsJson(manifest(name)).ok }).toEqual({ name, ok: true });
    }
    expect(reservedPluginName('browser')).toContain('built-in tools are named browser_*');
  });

  test('plugin create tab5 exits 2 with the reason and writes nothing; createPlugin refuses it too', async () => {
    const dir = join(root, 'out-tab5');
    const r = await runCli(['plugin', 'create', '--dir', dir, 'tab5'], { configDir: join(root, 'cfg'), cwd: root });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('"tab5" is reserved: tools a web page registers are named tab<tab id>_*');
    expect(r.stderr).toContain('plugin create --help` for usage.');
    expect(existsSync(dir)).toBe(false);

    // "Tab5" is not a plugin name, and its fitted form "tab5" is reserved: it is not offered.
    const fit = await runCli(['plugin', 'create', '--dir', dir, 'Tab5'], { configDir: join(root, 'cfg'), cwd: root });
    expect(fit.code).toBe(2);
    expect(fit.stderr).toContain('"Tab5" is not a valid plugin name');
    expect(fit.stderr).not.toContain('Did you mean "tab5"');

    await expect(createPlugin('tab7', join(root, 'tab7'))).rejects.toThrow('name: "tab7" is reserved: tools a web page registers are named tab<tab id>_*');
    expect(existsSync(join(root, 'tab7'))).toBe(false);
  });

  test('a build of a plugin renamed to tab5 stops at the manifest check', async () => {
    const { dir } = await createPlugin('tabfive', join(root, 'tabfive'));
    for (const file of ['src/index.ts', 'package.json']) {
      const path = join(dir, file);
      const text = readFileSync(path, 'utf8');
      const changed = text.replaceAll('tabfive', 'tab5');
      expect(changed).not.toBe(text);
      writeFileSync(path, changed);
    }
    let message = '';
    try {
      await buildPlugin(dir, { reload: false, log: () => {} });
    } catch (err) {
      expect(err).toBeInstanceOf(PluginBuildError);
      message = (err as Error).message;
    }
    expect(message).toBe('plugin name: "tab5" is reserved: tools a web page registers are named tab<tab id>_*, the form of tab5_*; pick another plugin name');
  });

  test('server discovery refuses a folder whose tools.json names tab5, naming the plugin and why; a good plugin beside it loads', async () => {
    const write = (dir: string, name: string) => {
      mkdirSync(join(dir, 'dist'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
      writeFileSync(join(dir, 'dist', 'tools.json'), JSON.stringify(manifest(name)));
      writeFileSync(join(dir, 'dist', 'adapter.js'), `(() => { const hash = "${ADAPTER_HASH_PLACEHOLDER}"; })();`);
      return dir;
    };
    const bad = write(join(root, 'found', 'bad'), 'tab5');
    const good = write(join(root, 'found', 'good'), 'tab-5');
    const configDir = join(root, 'discover-cfg');
    mkdirSync(configDir, { recursive: true });
    const found = await discoverPlugins(configDir, [bad, good]);
    expect(found.plugins.map((p) => p.plugin.name)).toEqual(['tab-5']);
    expect(found.failed).toEqual([
      { path: bad, name: 'tab5', error: 'dist/tools.json name: "tab5" is reserved: tools a web page registers are named tab<tab id>_*, the form of tab5_*; pick another plugin name' },
    ]);
  });
});
