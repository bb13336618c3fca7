/**
 * Tool names every MCP client accepts: at most 64 characters of [A-Za-z0-9_-] (Cursor and clients
 * backed by OpenAI models refuse longer names or names with dots). The built-in tools keep to it,
 * as listed over MCP; a plugin whose prefixed tool name is longer is refused when its tools.json is
 * read (at build and at load), naming the tool. Cursor also hides a tool whose name and server name
 * together reach 60 characters: the build warns about a name longer than 51 ("opentabs" + 51 = 59).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPlugin, createPlugin } from '../../plugins/tooling/index.ts';
import { CURSOR_TOOL_NAME_MAX } from '../../plugins/tooling/manifest.ts';
import { removeDir, tempDir } from './cli-support.ts';
import { MAX_TOOL_FULL_NAME, parseToolsJson } from '../../server/protocol/plugin-manifest.ts';
import { connectMcp, startPluginServer } from '../harness/fake-extension.ts';

setDefaultTimeout(180_000);

const manifest = (name: string, tool: string) => ({
  name,
  displayName: 'X',
  description: 'x',
  version: '1.0.0',
  urlPatterns: ['http://127.0.0.1/*'],
  tools: [{ name: 'ok', description: 'ok', inputSchema: { type: 'object' } }, { name: tool, description: 't', inputSchema: { type: 'object' } }],
});

describe('tool names', () => {
  test('every tool /mcp lists (built-ins and a plugin at the limit) has a name clients accept', async () => {
    const tool = 'a'.repeat(MAX_TOOL_FULL_NAME - 'notes_'.length);
    const srv = await startPluginServer({ plugins: [{ name: 'notes', tools: [{ name: tool }] }], permissions: { notes: { default: 'auto' } } });
    try {
      const c = await connectMcp(srv.url, srv.secret);
      const { tools } = await c.listTools();
      await c.close();
      expect(tools.length).toBeGreaterThan(10);
      expect(tools.map((t) => t.name)).toContain(`notes_${tool}`);
      for (const t of tools) expect(t.name).toMatch(new RegExp(`^[A-Za-z0-9_-]{1,${MAX_TOOL_FULL_NAME}}$`));
    } finally {
      await srv.stop();
    }
  });

  test('a tool name over 64 characters with its plugin prefix is refused, naming it and its length', () => {
    expect(parseToolsJson(manifest('notes', 'a'.repeat(MAX_TOOL_FULL_NAME - 'notes_'.length))).ok).toBe(true);
    const long = 'b'.repeat(MAX_TOOL_FULL_NAME - 'notes_'.length + 1);
    const r = parseToolsJson(manifest('notes', long));
    expect(r.ok).toBe(false);
    const error = (r as { error: string }).error;
    expect(error).toContain(`"notes_${long}" is ${MAX_TOOL_FULL_NAME + 1} characters`);
    expect(error).toContain(`longer than ${MAX_TOOL_FULL_NAME}`);
  });
});

describe('build warning for Cursor', () => {
  test(`a prefixed tool name of ${CURSOR_TOOL_NAME_MAX} characters builds quietly; one longer is built with a warning naming it`, async () => {
    expect(CURSOR_TOOL_NAME_MAX).toBe(51);
    const root = tempDir();
    try {
      const { dir } = await createPlugin('names', join(root, 'opentabs-plugin-names'), { urlPattern: 'http://127.0.0.1:45043/*' });
      const src = join(dir, 'src', 'index.ts');
      const original = readFileSync(src, 'utf8');
      expect(original).toContain("name: 'get_page_info'");
      const build = async (tool: string) => {
        writeFileSync(src, original.replace("name: 'get_page_info'", `name: '${tool}'`));
        return (await buildPlugin(dir, { reload: false, log: () => {} })).warnings.filter((w) => w.includes('Cursor'));
      };
      const fits = 'f'.repeat(CURSOR_TOOL_NAME_MAX - 'names_'.length);
      expect(await build(fits)).toEqual([]);
      const long = 'l'.repeat(CURSOR_TOOL_NAME_MAX - 'names_'.length + 1);
      const warnings = await build(long);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`tool "names_${long}" is ${CURSOR_TOOL_NAME_MAX + 1} characters`);
      expect(warnings[0]).toContain(`at most ${CURSOR_TOOL_NAME_MAX}`);
    } finally {
      removeDir(root);
    }
  });
});
