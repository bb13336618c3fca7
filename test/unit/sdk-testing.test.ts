/** runTool with a fake page and fake routes: a plugin author's unit test without a browser or network. */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { csrfHeaders, definePlugin, defineTool, getMetaContent, patchJson } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const plugin = definePlugin({
  name: 'kanban',
  displayName: 'Kanban',
  description: 'Cards',
  urlPatterns: ['http://127.0.0.1:9847/*'],
  isReady: () => Boolean(getMetaContent('csrf-token')),
  tools: [
    defineTool({
      name: 'rename_card',
      description: 'Rename a card',
      input: v.object({ id: v.number(), title: v.string() }),
      output: v.object({ id: v.number(), title: v.string() }),
      handle: (input, ctx) => patchJson(`/api/cards/${input.id}`, { title: input.title }, { headers: csrfHeaders(), signal: ctx.signal }),
    }),
  ],
});

test('the tool runs against the fake page and routes; the request carries the CSRF header; globals are restored', async () => {
  const requests: Request[] = [];
  const { outcome } = await runTool(
    plugin,
    'rename_card',
    { id: 7, title: 'New' },
    {
      page: { url: 'http://127.0.0.1:9847/board', meta: { 'csrf-token': 'tok' } },
      routes: { 'PATCH /api/cards/7': async (req) => ({ id: 7, title: ((await req.json()) as { title: string }).title }) },
      requests,
    },
  );
  expect(outcome).toEqual({ ok: true, value: { id: 7, title: 'New' } });
  expect(requests).toHaveLength(1);
  expect(requests[0].url).toBe('http://127.0.0.1:9847/api/cards/7');
  expect(requests[0].headers.get('x-csrf-token')).toBe('tok');
  expect((globalThis as Record<string, unknown>).document).toBeUndefined();
});

test('fake responses map to tool errors; an unrouted request is a 404, never the network', async () => {
  const forbidden = await runTool(plugin, 'rename_card', { id: 1, title: 'x' }, { page: {}, routes: { '/api/cards/1': () => new Response('{"error":"stale token"}', { status: 403 }) } });
  expect(forbidden.outcome.ok).toBe(false);
  if (!forbidden.outcome.ok) expect(forbidden.outcome.error.message).toContain('forbidden');
  const missing = await runTool(plugin, 'rename_card', { id: 2, title: 'x' }, { page: {}, routes: {} });
  expect(missing.outcome.ok).toBe(false);
  if (!missing.outcome.ok) expect(missing.outcome.error.category).toBe('not_found');
});
