/**
 * Built-in tools' default permissions follow one rule (README "What needs approval", and the
 * comment at defaultPermission in server/protocol/browser-tools/declare.ts): a tool that reveals
 * what the user did or keeps beyond the open tabs, or acts beyond a page, does not start `auto`,
 * since an agent a page has prompt-injected calls `auto` tools without the user seeing.
 *
 * The rule is checked from what each declaration says of itself, never from a list of names:
 *  - the `data` group (history, bookmarks, downloads and their URLs, recently closed tabs, site
 *    data) and the `storage` group (cookies of any site, page storage) start `ask` or `off`, and
 *    reading storage or cookies (session secrets) starts `off`;
 *  - a tool that changes something (not read-only) and declares a `risk` starts `ask` or `off`.
 * Then, on a running server with no permission set: the catalog applies each declared default, a
 * call of every `ask` tool waits for the user's approval (the extension is shown the card and is
 * sent nothing to run) and runs only once allowed, and an `off` tool is refused.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { BUILTIN_TOOLS } from '../../server/protocol/browser-tools/index.ts';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir, startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp } from '../harness/fake-extension.ts';

setDefaultTimeout(60_000);

const TAB = 41;
const TAB_URL = 'https://app.example/inbox';

/** Reveals or acts beyond the open tabs: the browser's own records, other sites' cookies, page storage. */
const BEYOND_TABS_GROUPS = new Set(['data', 'storage']);

const readOnly = (t: (typeof BUILTIN_TOOLS)[number]): boolean => (t.annotations as { readOnlyHint?: boolean }).readOnlyHint === true;
const risk = (t: (typeof BUILTIN_TOOLS)[number]): string | undefined => (t as { risk?: string }).risk;

describe('the rule, for every built-in tool', () => {
  test('no tool of the data or storage group starts auto; reading cookies or storage starts off', () => {
    const inGroups = BUILTIN_TOOLS.filter((t) => BEYOND_TABS_GROUPS.has(t.group));
    expect(inGroups.length).toBeGreaterThan(0);
    const auto = inGroups.filter((t) => t.defaultPermission === 'auto').map((t) => t.name);
    expect(auto).toEqual([]);
    const secretsNotOff = inGroups.filter((t) => t.group === 'storage' && readOnly(t) && t.defaultPermission !== 'off').map((t) => t.name);
    expect(secretsNotOff).toEqual([]);
  });

  test('no tool that changes something and declares a risk starts auto', () => {
    const risky = BUILTIN_TOOLS.filter((t) => !readOnly(t) && risk(t) !== undefined);
    expect(risky.length).toBeGreaterThan(0);
    expect(risky.filter((t) => t.defaultPermission === 'auto').map((t) => t.name)).toEqual([]);
  });

  test("the browser's records of the user's activity are in the data group (so the rule above holds for them)", () => {
    // Each description names what it lists; a tool reading history, downloads or closed tabs in
    // another group would escape the group rule.
    const records = BUILTIN_TOOLS.filter((t) => /\b(history|bookmarks?|downloads|recently closed)\b/i.test(t.description) && readOnly(t));
    expect(records.length).toBeGreaterThan(0);
    expect(records.filter((t) => t.group !== 'data').map((t) => t.name)).toEqual([]);
  });
});

/** Arguments a tool's input schema accepts, from its required properties only. */
function argsFor(schema: { properties?: Record<string, any>; required?: string[] }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of schema.required ?? []) out[key] = valueFor(key, schema.properties?.[key] ?? {});
  return out;
}
function valueFor(key: string, s: any): unknown {
  if (key === 'tabId') return TAB;
  if (Array.isArray(s.enum)) return s.enum[0];
  switch (s.type) {
    case 'integer':
    case 'number':
      return Math.max(1, s.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return [valueFor('', s.items ?? { type: 'string' })];
    case 'object':
      return argsFor(s);
    default:
      return /url|origin/i.test(key) ? 'https://app.example/' : key === '' ? uploadFile : 'x';
  }
}

let dir = '';
let uploads = '';
let uploadFile = '';
let srv: TestServer;
let ext: FakeExtension;
let mcp: Client;

beforeAll(async () => {
  dir = makeTempConfigDir('opentabs-s23w1-');
  // A file the user allowed for uploads, so browser_upload_file gets as far as asking.
  uploads = realpathSync(mkdtempSync(join(tmpdir(), 'opentabs-s23w1-uploads-')));
  uploadFile = join(uploads, 'report.txt');
  writeFileSync(uploadFile, 'report\n');
  // No permission configured: every built-in has its declared default.
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {}, uploadFolders: [uploads] }));
  srv = await startTestServer({ skipPermissions: false, configDir: dir });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.tabPages.set(TAB, TAB_URL);
  mcp = await connectMcp(srv.url, srv.secret);
});
afterAll(async () => {
  await mcp?.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
  if (dir) removeDir(dir);
  if (uploads) rmSync(uploads, { recursive: true, force: true });
});

describe('a running server applies the defaults', () => {
  test('the catalog gives every built-in its declared default', () => {
    const catalog = srv.ctx.catalog.current();
    const differ = BUILTIN_TOOLS.filter((t) => catalog.get(t.name)?.permission !== t.defaultPermission).map((t) => t.name);
    expect(differ).toEqual([]);
  });

  test('a call of every ask tool waits for approval, the extension sent nothing to run; denied, it never runs', async () => {
    const listed = (await mcp.listTools()).tools;
    const askTools = BUILTIN_TOOLS.filter((t) => t.defaultPermission === 'ask');
    expect(askTools.length).toBeGreaterThan(0);
    for (const t of askTools) {
      const schema = listed.find((l) => l.name === t.name)!.inputSchema as { properties?: Record<string, any>; required?: string[] };
      const args = argsFor(schema);
      const dispatchedBefore = ext.sent('tool.dispatch').length;
      const card = ext.waitNext((m) => m.method === 'confirmation.request' && m.params?.tool === t.name, 10_000, `the approval card of ${t.name}`);
      const call = mcp.callTool({ name: t.name, arguments: args });
      const req = await card.catch(async (e: Error) => {
        // Refused before asking: say why, with the call's own answer.
        throw new Error(`${e.message}; the call answered ${JSON.stringify(await call.catch((x: Error) => x.message))}`);
      });
      expect(req.params.params).toEqual(args);
      expect(srv.ctx.hub.confirmations.list().map((p) => p.tool)).toContain(t.name);
      expect(ext.sent('tool.dispatch').length).toBe(dispatchedBefore);
      ext.confirm(req.params.id, 'deny');
      const res = (await call) as { isError?: boolean; content: { text: string }[] };
      expect(res.isError).toBe(true);
      expect(res.content[0]!.text).toMatch(/denied/i);
      expect(ext.sent('tool.dispatch').length).toBe(dispatchedBefore);
    }
  });

  test('allowed, the waiting call of the downloads list runs and gets the extension’s answer', async () => {
    ext.onDispatch('browser_list_downloads', () => ({ value: { downloads: [{ downloadId: 1, url: 'https://files.example/signed?sig=abc', filename: '/home/u/Downloads/a.pdf', state: 'complete' }] } }));
    const card = ext.waitNext((m) => m.method === 'confirmation.request' && m.params?.tool === 'browser_list_downloads', 10_000, 'the approval card');
    const call = mcp.callTool({ name: 'browser_list_downloads', arguments: {} });
    const req = await card;
    expect(ext.sent('tool.dispatch').filter((m) => m.params?.tool === 'browser_list_downloads')).toEqual([]);
    ext.confirm(req.params.id, 'allow');
    const res = (await call) as { isError?: boolean; content: { text: string }[] };
    expect(res.isError).toBeFalsy();
    expect(res.content[0]!.text).toContain('signed?sig=abc');
  });

  test('an off tool is refused without asking', async () => {
    const offTools = BUILTIN_TOOLS.filter((t) => t.defaultPermission === 'off');
    expect(offTools.length).toBeGreaterThan(0);
    const listed = (await mcp.listTools()).tools;
    for (const t of offTools) {
      const schema = listed.find((l) => l.name === t.name)!.inputSchema as { properties?: Record<string, any>; required?: string[] };
      const cards = ext.sent('confirmation.request').length;
      const res = (await mcp.callTool({ name: t.name, arguments: argsFor(schema) })) as { isError?: boolean; content: { text: string }[] };
      expect(res.isError).toBe(true);
      expect(res.content[0]!.text).toMatch(/off|disabled/i);
      expect(ext.sent('confirmation.request').length).toBe(cards);
    }
  });
});
