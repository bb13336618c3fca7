/**
 * `opentabs plugin create <name> [--dir <parent>] [--url <match pattern>]`: scaffold a plugin
 * that builds and passes its own test out of the box. The scaffold's tsconfig maps
 * @opentabs/sdk and valibot to this OpenTabs checkout, so neither `bun test` nor the editor
 * needs an npm install inside the plugin.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PLUGIN_NAME_RE, reservedPluginName } from '../../server/protocol/plugin-manifest.ts';
import { isMatchPattern } from '../../server/protocol/match-pattern.ts';
import { CLI_BIN, ROOT_NODE_MODULES, SDK_DIR } from './paths.ts';
import { PluginBuildError } from './build-error.ts';
import { patternSuggestion } from './manifest.ts';
import { configDirAssignment, shellWord } from '../../server/cli-command.ts';

export interface CreateOptions {
  /** Match pattern for the app (default https://example.com/*). */
  urlPattern?: string;
  displayName?: string;
}

export interface CreateResult {
  dir: string;
  packageName: string;
  files: string[];
  /** Shell line that builds, tests and adds the plugin, runnable as printed. */
  next: string;
}

const titleCase = (name: string) => name.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');

/** Create `<dir>` (which must be missing or empty) with a working plugin named `name`. */
export async function createPlugin(name: string, dirArg?: string, o: CreateOptions = {}): Promise<CreateResult> {
  if (typeof name !== 'string' || !PLUGIN_NAME_RE.test(name)) {
    throw new PluginBuildError(`name: ${JSON.stringify(name)} is not a valid plugin name (lowercase letters and digits, words joined by "-", e.g. "my-app")`);
  }
  const reserved = reservedPluginName(name);
  if (reserved) throw new PluginBuildError(`name: ${reserved}`);
  const dir = resolve(dirArg ?? `opentabs-plugin-${name}`);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new PluginBuildError(`${dir} exists and is not a folder`);
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new PluginBuildError(
      `folder ${dir} already exists and is not empty (a plugin created before?): build that one (\`cd ${shellWord(dir)} && ${configDirAssignment()}npm run build\`), or create into another folder with --dir`,
    );
  }
  const packageName = `opentabs-plugin-${name}`;
  const displayName = o.displayName ?? titleCase(name);
  const urlPattern = o.urlPattern ?? 'https://example.com/*';
  if (!isMatchPattern(urlPattern)) {
    throw new PluginBuildError(`url: ${JSON.stringify(urlPattern)} is not a Chrome match pattern like "https://app.example.com/*" or "http://127.0.0.1:3000/*".${patternSuggestion(urlPattern)}`);
  }

  const files: Record<string, string> = {
    'package.json':
      JSON.stringify(
        {
          name: packageName,
          version: '0.1.0',
          description: `OpenTabs plugin for ${displayName}`,
          type: 'module',
          keywords: ['opentabs-plugin'],
          files: ['dist'],
          // Absolute paths into this OpenTabs checkout: `npm run …` works without opentabs or bun on PATH.
          scripts: {
            build: `node ${JSON.stringify(CLI_BIN)} plugin build`,
            dev: `node ${JSON.stringify(CLI_BIN)} plugin build --watch`,
            test: `${JSON.stringify(join(ROOT_NODE_MODULES, '.bin', 'bun'))} test`,
            typecheck: `node ${JSON.stringify(join(ROOT_NODE_MODULES, 'typescript', 'bin', 'tsc'))} --noEmit -p .`,
            add: `node ${JSON.stringify(CLI_BIN)} plugin add .`,
            // npm pack / npm publish ship dist/ as it is: build it from the sources first.
            prepack: `node ${JSON.stringify(CLI_BIN)} plugin build`,
          },
        },
        null,
        2,
      ) + '\n',
    'tsconfig.json':
      JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            module: 'ESNext',
            moduleResolution: 'bundler',
            lib: ['ES2023', 'DOM', 'DOM.Iterable'],
            // bun:test types for the plugin's own tests, from this checkout.
            typeRoots: [ROOT_NODE_MODULES],
            types: ['bun-types'],
            strict: true,
            noEmit: true,
            allowImportingTsExtensions: true,
            skipLibCheck: true,
            // This checkout's SDK and valibot: no install needed inside the plugin.
            paths: {
              '@opentabs/sdk': [join(SDK_DIR, 'index.ts')],
              '@opentabs/sdk/*': [join(SDK_DIR, '*')],
              valibot: [join(ROOT_NODE_MODULES, 'valibot')],
            },
          },
          include: ['src', 'test'],
        },
        null,
        2,
      ) + '\n',
    '.gitignore': 'dist/\nnode_modules/\n',
    'src/index.ts': `import * as v from 'valibot';
import { definePlugin, defineTool, getMetaContent } from '@opentabs/sdk';

/** Reads what the page already knows; replace with calls to the app's own API (fetchJson/postJson). */
const getPageInfo = defineTool({
  name: 'get_page_info',
  description: 'Title, URL and description of the ${displayName} page open in the browser.',
  input: v.object({}),
  output: v.object({ title: v.string(), url: v.string(), description: v.optional(v.string()) }),
  async handle(_input, ctx) {
    ctx.log.info('reading page info');
    return { title: document.title, url: location.href, description: getMetaContent('description') };
  },
});

export default definePlugin({
  name: '${name}',
  displayName: '${displayName}',
  description: 'Use ${displayName} from your AI agent through the tab you are logged in to.',
  urlPatterns: [${JSON.stringify(urlPattern)}],
  // True when the page is usable (e.g. logged in); tools run only on ready tabs.
  isReady: () => document.readyState !== 'loading',
  tools: [getPageInfo],
});
`,
    'test/plugin.test.ts': `import { expect, test } from 'bun:test';
import { runTool } from '@opentabs/sdk/testing';
import plugin from '../src/index.ts';

// Holds for any tool: replace or add tools and this keeps checking them.
test('every tool rejects input that is not an object', async () => {
  expect(plugin.tools.length).toBeGreaterThan(0);
  for (const tool of plugin.tools) {
    const { outcome } = await runTool(plugin, tool.name, 'not an object');
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.category).toBe('validation');
  }
});

// The sample tool's own test; delete it together with the sample tool.
test.skipIf(!plugin.tools.some((t) => t.name === 'get_page_info'))('get_page_info returns the page title, URL and description', async () => {
  // A stand-in page for this call only (title, URL, meta tags, cookie, globals, localStorage,
  // sessionStorage); \`routes\` fakes the app's API the same way. e2e tests run the adapter in a
  // real browser.
  const page = { url: 'https://example.com/home', title: 'Example', meta: { description: 'An example page' } };
  const { outcome, logs } = await runTool(plugin, 'get_page_info', {}, { page });
  expect(outcome).toEqual({ ok: true, value: { title: 'Example', url: 'https://example.com/home', description: 'An example page' } });
  expect(logs[0]?.message).toBe('reading page info');
});
`,
  };
  await mkdir(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, '..'), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  // Commands that run as printed: npm scripts with absolute paths, no opentabs or bun on PATH needed.
  const next = `cd ${shellWord(dir)} && npm run build && npm test && npm run add`;
  return { dir, packageName, files: Object.keys(files), next };
}
