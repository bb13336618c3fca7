/**
 * Tool names every MCP client accepts: at most 64 characters of [A-Za-z0-9_-] (Cursor and clients
 * backed by OpenAI models refuse longer names or names with dots). The built-in tools keep to it,
 * as listed over MCP; a plugin whose prefixed tool name is longer is refused when its tools.json is
 * read (at build and at load), naming the tool.
 */
import { describe, expect, test } from 'bun:test';
import { MAX_TOOL_FULL_NAME, parseToolsJson } from '../../server/protocol/plugin-manifest.ts';
import { connectMcp, startPluginServer } from '../harness/fake-extension.ts';

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
