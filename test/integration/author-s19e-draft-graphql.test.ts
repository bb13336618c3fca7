/**
 * A plugin drafted from recorded GraphQL traffic answers the errors a GraphQL server sends with
 * HTTP 200 by their code: an expired session (UNAUTHENTICATED) is an `auth` error telling the
 * agent to ask the user to log in, not a `validation` error with the bare message.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from '../../plugins/sdk/testing.ts';
import type { PluginDefinition } from '../../plugins/sdk/define.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

const root = tempDir('opentabs-author-s19e-draft-');
afterAll(() => removeDir(root));

test('a drafted GraphQL tool: data, and UNAUTHENTICATED as an auth error that says to log in', async () => {
  const O = 'https://gql.example.com';
  const query = 'query Orders { orders { id } }';
  const capture = {
    requests: [
      {
        method: 'POST',
        url: `${O}/graphql`,
        status: 200,
        mimeType: 'application/json',
        requestHeaders: { 'content-type': 'application/json' },
        responseHeaders: {},
        requestBody: { text: JSON.stringify({ operationName: 'Orders', query, variables: {} }) },
        responseBody: { text: '{"data":{"orders":[{"id":"o1"}]}}' },
      },
    ],
  };
  const file = join(root, 'capture.json');
  writeFileSync(file, JSON.stringify(capture));
  const dir = join(root, 'opentabs-plugin-gql');
  const created = await runCli(['plugin', 'create', 'gql', '--dir', dir, '--from-capture', file], { configDir: join(root, 'state'), cwd: root });
  expect({ code: created.code, err: created.stderr }).toMatchObject({ code: 0 });
  const plugin = (await import(join(dir, 'src', 'index.ts'))).default as PluginDefinition;
  const tool = plugin.tools[0]!.name;
  const page = { url: `${O}/app` };
  let answer: unknown = { data: { orders: [{ id: 'o2' }] } };
  const routes = { 'POST /graphql': () => answer };
  expect((await runTool(plugin, tool, {}, { page, routes })).outcome).toEqual({ ok: true, value: { orders: [{ id: 'o2' }] } });
  answer = { data: null, errors: [{ message: 'token expired', extensions: { code: 'UNAUTHENTICATED' } }] };
  const expired = (await runTool(plugin, tool, {}, { page, routes })).outcome;
  expect(expired).toMatchObject({ ok: false, error: { category: 'auth', code: 'graphql_unauthenticated' } });
  expect(JSON.stringify(expired)).toContain(`token expired (not logged in: the session in the browser has ended or was never started; ask the user to log in to the app at ${O} in their browser, then call again)`);
});
