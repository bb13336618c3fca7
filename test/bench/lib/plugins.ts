/**
 * Plugins for the bench: synthetic ones in the on-disk format (package.json + dist/tools.json +
 * dist/adapter.js) for start-up and tools/list at scale, and a real SDK plugin with one trivial
 * tool (`bench_echo`) for the end-to-end call path, built with the plugin tooling.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlugin, type BuildResult } from '../../../plugins/tooling/build.ts';
import { SDK_VERSION } from '../../../server/version.ts';

/** `plugins` folders of `toolsEach` tools each under `parent`; returns their paths. */
export function writeSyntheticPlugins(parent: string, plugins: number, toolsEach: number): string[] {
  const paths: string[] = [];
  for (let p = 0; p < plugins; p++) {
    const name = `synth${p}`;
    const dir = join(parent, name);
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
    // A realistic tool: a one-sentence description and a few typed, described arguments.
    const tools = Array.from({ length: toolsEach }, (_, t) => ({
      name: `action_${t}`,
      description: `Run action ${t} of ${name} against the app's API and return the result.`,
      inputSchema: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'Item id' },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
        },
        required: ['id'],
        additionalProperties: false,
      },
    }));
    writeFileSync(
      join(dir, 'dist', 'tools.json'),
      JSON.stringify({ name, displayName: `Synthetic ${p}`, description: `Synthetic bench plugin ${p}`, version: '1.0.0', sdkVersion: SDK_VERSION, urlPatterns: [`https://${name}.example.com/*`], excludePatterns: [], tools }),
    );
    writeFileSync(join(dir, 'dist', 'adapter.js'), `(()=>{/* ${name} */})();\n`);
    paths.push(dir);
  }
  return paths;
}

/** Source of the bench plugin: `echo` returns its input at once (no network, no DOM). */
export function writeBenchPlugin(dir: string, urlPattern: string): void {
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'opentabs-plugin-bench', version: '1.0.0', type: 'module' }));
  writeFileSync(
    join(dir, 'src', 'index.ts'),
    `import * as v from 'valibot';
import { definePlugin, defineTool } from '@opentabs/sdk';

const echo = defineTool({
  name: 'echo',
  description: 'Return the text given (a trivial handler for benchmarks).',
  input: v.object({ text: v.string() }),
  output: v.object({ text: v.string() }),
  handle: async (input) => ({ text: input.text }),
});

export default definePlugin({
  name: 'bench',
  displayName: 'Bench',
  description: 'Benchmark plugin with one trivial tool.',
  urlPatterns: [${JSON.stringify(urlPattern)}],
  isReady: () => true,
  tools: [echo],
});
`,
  );
}

export async function buildBenchPlugin(dir: string, urlPattern: string): Promise<BuildResult> {
  writeBenchPlugin(dir, urlPattern);
  return buildPlugin(dir, { reload: false, log: () => {} });
}
