/**
 * A scaffolded plugin works as generated: its npm scripts (no opentabs or bun on PATH, no npm
 * install) type-check, test and build it, and its test keeps passing once the sample tool is
 * replaced by the author's own.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlugin } from '../../plugins/tooling/index.ts';

setDefaultTimeout(240_000);
const root = mkdtempSync(join(tmpdir(), 'opentabs-scaffold-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// PATH without the checkout's node_modules/.bin or any bun: only node and npm from the system.
const env = { ...process.env, PATH: '/usr/local/bin:/usr/bin:/bin', OPENTABS_CONFIG_DIR: join(root, 'state') };
function npmRun(dir: string, script: string) {
  const r = spawnSync('npm', ['run', '--silent', script], { cwd: dir, env, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('scaffold works as generated', () => {
  test('default folder is ./opentabs-plugin-<name>; next steps use npm scripts only', async () => {
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const r = await createPlugin('folder-check');
      expect(r.dir).toBe(join(root, 'opentabs-plugin-folder-check'));
      expect(r.next).toContain('npm run build && npm test && npm run add');
      expect(r.next).not.toMatch(/\bopentabs plugin|\bbun test/);
    } finally {
      process.chdir(cwd);
    }
  });

  test('typecheck, test and build pass out of the box, and after the sample tool is replaced', async () => {
    const { dir } = await createPlugin('shop', join(root, 'opentabs-plugin-shop'), { urlPattern: 'http://127.0.0.1:9847/*' });
    for (const script of ['typecheck', 'test', 'build']) {
      const r = npmRun(dir, script);
      expect({ script, status: r.status, output: r.output }).toMatchObject({ script, status: 0 });
    }
    expect(existsSync(join(dir, 'dist/adapter.js'))).toBe(true);
    const tools = JSON.parse(readFileSync(join(dir, 'dist/tools.json'), 'utf8'));
    expect(tools.urlPatterns).toEqual(['http://127.0.0.1:9847/*']);

    // The author's own tool, written with the SDK's HTTP helpers, in place of the sample.
    writeFileSync(
      join(dir, 'src/index.ts'),
      `import * as v from 'valibot';
import { csrfHeaders, definePlugin, defineTool, patchJson } from '@opentabs/sdk';

const renameCard = defineTool({
  name: 'rename_card',
  description: 'Rename a card.',
  input: v.object({ id: v.number(), title: v.string() }),
  output: v.object({ id: v.number(), title: v.string() }),
  handle: (input, ctx) => patchJson<{ id: number; title: string }>(\`/api/cards/\${input.id}\`, { title: input.title }, { headers: csrfHeaders(), signal: ctx.signal }),
});

export default definePlugin({
  name: 'shop',
  displayName: 'Shop',
  description: 'Cards in Shop',
  urlPatterns: ['http://127.0.0.1:9847/*'],
  isReady: () => document.querySelectorAll('meta[name="csrf-token"]').length > 0,
  tools: [renameCard],
});
`,
    );
    for (const script of ['typecheck', 'test', 'build']) {
      const r = npmRun(dir, script);
      expect({ script, status: r.status, output: r.output }).toMatchObject({ script, status: 0 });
    }
    expect(npmRun(dir, 'test').output).toMatch(/1 pass/);
    expect(JSON.parse(readFileSync(join(dir, 'dist/tools.json'), 'utf8')).tools.map((t: { name: string }) => t.name)).toEqual(['rename_card']);
  });
});
