/**
 * plugins/sdk/README.md's single-page app block and its upload tool, followed to the letter: each
 * passes the type check and builds in a scaffold, and the app block's tools run under `npm test`'s
 * bun test with runTool: the token from the fake page's localStorage sent as Bearer to the API's
 * other origin without cookies, every page with a 429 waited out, and the live feed's events.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, ROOT, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

const SDK_README = readFileSync(join(ROOT, 'plugins', 'sdk', 'README.md'), 'utf8');
const tsBlocks = [...SDK_README.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
const spa = tsBlocks.find((b) => b.includes("name: 'mail'"))!;
const upload = tsBlocks.find((b) => b.includes("name: 'upload_attachment'"))!;

let root: string;
let cfg: string;
let dir: string;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'state');
  dir = join(root, 'opentabs-plugin-mail');
  expect((await runCli(['plugin', 'create', 'mail', '--dir', dir, '--url', 'https://mail.example/app/*'], { configDir: cfg })).code).toBe(0);
});
afterAll(() => removeDir(root));

async function build(source: string): Promise<{ code: number; out: string }> {
  writeFileSync(join(dir, 'src', 'index.ts'), source);
  const r = await runCli(['plugin', 'build', dir], { configDir: cfg, timeoutMs: 200_000 });
  return { code: r.code, out: `${r.stdout}\n${r.stderr}` };
}

test("the upload tool builds with the type check (base64ToBytes' bytes are a BlobPart)", async () => {
  expect(upload).toContain('base64ToBytes(input.contentBase64');
  const source = `import * as v from 'valibot';
import { base64ToBytes, definePlugin, defineTool, fetchJson } from '@opentabs/sdk';
const uploadAttachment = ${upload.trim().replace(/;$/, '')};
export default definePlugin({ name: 'mail', displayName: 'Mail', description: 'Mail', urlPatterns: ['https://mail.example/app/*'], isReady: () => true, tools: [uploadAttachment] });
`;
  const r = await build(source);
  expect(r.out).toContain('Type check passed.');
  expect(r.code).toBe(0);
});

test('the single-page app block builds, and its tools send the stored token without cookies, retry a 429 and read the feed', async () => {
  expect(spa).toBeDefined();
  const r = await build(spa);
  expect(r.out).toContain('Type check passed.');
  expect(r.code).toBe(0);
  writeFileSync(
    join(dir, 'test', 'spa.test.ts'),
    `import { expect, test } from 'bun:test';
import { runTool } from '@opentabs/sdk/testing';
import plugin from '../src/index.ts';

const page = { url: 'https://mail.example/app/inbox', localStorage: { token: 'tok-1' } };

test('every page, the 429 waited out, the token sent, no cookies', async () => {
  const requests: Request[] = [];
  let throttled = false;
  const { outcome, logs } = await runTool(plugin, 'list_messages', {}, {
    page,
    requests,
    routes: {
      'GET https://api.mail.example/messages': (req) => {
        const cursor = new URL(req.url).searchParams.get('cursor');
        if (cursor === 'c2' && !throttled) {
          throttled = true;
          return new Response('slow down', { status: 429, headers: { 'retry-after': '0' } });
        }
        return cursor === 'c2' ? { messages: [{ id: 'm2', subject: 'b' }], nextCursor: null } : { messages: [{ id: 'm1', subject: 'a' }], nextCursor: 'c2' };
      },
    },
  });
  expect(outcome).toEqual({ ok: true, value: { messages: [{ id: 'm1', subject: 'a' }, { id: 'm2', subject: 'b' }] } });
  expect(requests.map((q) => [new URL(q.url).searchParams.get('cursor'), q.headers.get('authorization'), q.credentials])).toEqual([
    [null, 'Bearer tok-1', 'omit'],
    ['c2', 'Bearer tok-1', 'omit'],
    ['c2', 'Bearer tok-1', 'omit'],
  ]);
  expect(logs.map((l) => l.message)).toEqual(['rate limited; retrying in 0 ms']);
});

test('the feed read with the token', async () => {
  const requests: Request[] = [];
  const feed = 'event: mail\\nid: 7\\ndata: {"from":"bob"}\\n\\nevent: typing\\ndata: carol\\n\\n';
  const { outcome } = await runTool(plugin, 'recent_events', {}, {
    page,
    requests,
    routes: { 'GET https://api.mail.example/events': () => new Response(feed, { headers: { 'content-type': 'text/event-stream' } }) },
  });
  expect(outcome).toEqual({ ok: true, value: { events: [{ event: 'mail', data: '{"from":"bob"}', id: '7' }, { event: 'typing', data: 'carol', id: '7' }] } });
  expect(requests[0]!.headers.get('authorization')).toBe('Bearer tok-1');
});
`,
  );
  const proc = Bun.spawn([process.execPath, 'test', 'spa'], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(`${out}${err}`).toContain('(pass) every page, the 429 waited out, the token sent, no cookies');
  expect(`${out}${err}`).toContain('(pass) the feed read with the token');
  expect(code).toBe(0);
});
