/**
 * The page-tools channel's checks (server/protocol/page-tools.ts): what a page may send about its
 * tools and results, capped and checked the same way in the bridge and the service worker.
 */
import { describe, expect, test } from 'bun:test';
import { checkMcpContent, pageOrigin, sanitizePageTool, sanitizePageToolsMessage } from '../../server/protocol/page-tools.ts';
import { PAGE_TOOL_DESCRIPTION_MAX_CHARS, PAGE_TOOL_NAME_MAX_CHARS, PAGE_TOOL_RESULT_MAX_BYTES, PAGE_TOOL_SCHEMA_MAX_BYTES, PAGE_TOOLS_MAX_PER_TAB } from '../../server/limits.ts';

describe('MCP content check', () => {
  test('accepts text, image, audio, resource and resource_link blocks with structuredContent and isError', () => {
    const v = {
      content: [
        { type: 'text', text: 'a' },
        { type: 'image', data: 'AA==', mimeType: 'image/png' },
        { type: 'audio', data: 'AA==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'x:y', text: 't' } },
        { type: 'resource_link', uri: 'x:y', name: 'n' },
      ],
      structuredContent: { a: 1 },
      isError: false,
    };
    expect(checkMcpContent(v)).toEqual({ ok: true, value: v });
  });

  test('refuses what is not MCP content, naming the problem', () => {
    const bad: [unknown, string][] = [
      ['str', 'string'],
      [null, 'null'],
      [[1], 'an array'],
      [{ text: 'x' }, '`content` array'],
      [{ content: [{ type: 'text' }] }, 'content[0] is a text block'],
      [{ content: [{ type: 'image', data: 'x' }] }, 'content[0] is an image block'],
      [{ content: [{ type: 'video', data: 'x' }] }, 'unknown type'],
      [{ content: [], structuredContent: [1] }, 'structuredContent must be an object'],
      [{ content: [], isError: 'yes' }, 'isError must be a boolean'],
    ];
    for (const [value, message] of bad) {
      const r = checkMcpContent(value);
      expect(r.ok).toBe(false);
      expect((r as { message: string }).message).toContain(message);
    }
  });
});

describe('page tool descriptors', () => {
  test('names, descriptions and schemas are capped; a JSON string schema is parsed', () => {
    expect(sanitizePageTool({ name: 'x'.repeat(PAGE_TOOL_NAME_MAX_CHARS + 1), inputSchema: {} })).toMatchObject({ ok: false, reason: expect.stringContaining('longer than') });
    const long = sanitizePageTool({ name: 'd', description: 'y'.repeat(PAGE_TOOL_DESCRIPTION_MAX_CHARS * 2) });
    expect(long.ok && long.tool.description.length).toBe(PAGE_TOOL_DESCRIPTION_MAX_CHARS);
    expect(sanitizePageTool({ name: 's', inputSchema: { type: 'object', description: 'z'.repeat(PAGE_TOOL_SCHEMA_MAX_BYTES) } })).toMatchObject({ ok: false, reason: expect.stringContaining('larger than') });
    expect(sanitizePageTool({ name: 'j', inputSchema: '{"type":"object"}' })).toEqual({ ok: true, tool: { name: 'j', description: '', inputSchema: { type: 'object' } } });
    expect(sanitizePageTool({ name: 'j', inputSchema: '{nope' })).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(sanitizePageTool({ name: 'n' })).toEqual({ ok: true, tool: { name: 'n', description: '', inputSchema: { type: 'object', properties: {} } } });
    expect(sanitizePageTool({ description: 'no name' })).toMatchObject({ ok: false });
  });

  test('a tool list is cut at the per-tab cap, duplicates dropped, the rest named in dropped; idempotent', () => {
    const tools = Array.from({ length: PAGE_TOOLS_MAX_PER_TAB + 3 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    const m = sanitizePageToolsMessage({ type: 'tools', tools: [...tools, { name: 't0' }, { name: 42 }] });
    expect(m?.type).toBe('tools');
    const list = m as Extract<typeof m, { type: 'tools' }> & object;
    expect(list.tools.length).toBe(PAGE_TOOLS_MAX_PER_TAB);
    expect(list.dropped?.length).toBe(4);
    expect(sanitizePageToolsMessage(list)).toEqual(list);
  });

  test('results: over the size cap or not MCP content become errors for their call; unknown messages are dropped', () => {
    const big = sanitizePageToolsMessage({ type: 'result', id: 'c1', ok: true, value: { content: [{ type: 'text', text: 'x'.repeat(PAGE_TOOL_RESULT_MAX_BYTES) }] } });
    expect(big).toMatchObject({ type: 'result', id: 'c1', ok: false, error: { code: 'result_too_large' } });
    expect(sanitizePageToolsMessage({ type: 'result', id: 'c2', ok: true, value: 7 })).toMatchObject({ ok: false, error: { code: 'invalid_page_result' } });
    expect(sanitizePageToolsMessage({ type: 'result', id: 'c3', ok: false, error: { code: 'Bad Code', message: 'm' } })).toEqual({ type: 'result', id: 'c3', ok: false, error: { code: 'tool_error', message: 'm' } });
    expect(sanitizePageToolsMessage({ type: 'registered', plugin: 'x', hash: 'h' })).toBeNull();
    expect(sanitizePageToolsMessage({ type: 'result', id: '', ok: true, value: { content: [] } })).toBeNull();
  });

  test('page tools come only from http(s) pages', () => {
    expect(pageOrigin('https://a.example/x?y')).toBe('https://a.example');
    expect(pageOrigin('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
    expect(pageOrigin('file:///etc/passwd')).toBeNull();
    expect(pageOrigin('chrome://settings')).toBeNull();
    expect(pageOrigin('not a url')).toBeNull();
  });
});
