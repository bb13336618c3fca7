/**
 * The extension replaces its secret in every frame it sends to the server, but only where all 64
 * characters appear. Tools that cut what they read let the agent choose where the cut falls:
 * browser_get_tab_content or browser_get_page_html with a maxLength ending one character before the
 * end of the secret returned 63 of its 64 hex digits (the last one is one of 16). No result may
 * carry a run of SECRET_PIECE_CHARS or more characters of the secret. And with file:// pages on,
 * an MCP client's config file that is not hidden (a project's opencode.json, which
 * `opentabs setup opencode` writes with the secret in it) is refused like the hidden ones.
 * Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

/** Shorter runs of the secret's characters are not told apart from other hex text. */
const PIECE = 16;
let h: BrowserHarness;
let home = '';
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

/** The longest run of the secret's characters (at any offset of it) found in `text`. */
function longestPiece(text: string, secret: string): number {
  let best = 0;
  for (let i = 0; i < secret.length; i++) {
    for (let len = Math.max(best + 1, 1); i + len <= secret.length; len++) {
      if (!text.includes(secret.slice(i, i + len))) break;
      best = len;
    }
  }
  return best;
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s15-pieces-'));
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto' } },
    routes: (req) => {
      if (new URL(req.url).pathname !== '/shows-secret') return undefined;
      return new Response(`<!doctype html><title>config</title><pre id="cfg">token: ${h.srv.secret} end</pre>`, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('pieces of the secret', () => {
  test('a read cut inside the secret returns no long piece of it', async () => {
    const opened = await call('browser_open_tab', { url: h.fixtureUrl('/shows-secret') });
    expect(opened.status).toBe(200);
    const tabId = opened.body.result.id as number;
    const secret = h.srv.secret;
    const before = 'token: '.length;
    for (const keep of [PIECE, 40, 63]) {
      const text = await call('browser_get_tab_content', { tabId, selector: '#cfg', maxLength: before + keep });
      expect(text.status).toBe(200);
      expect([keep, longestPiece(JSON.stringify(text.body), secret) < PIECE]).toEqual([keep, true]);
      expect(JSON.stringify(text.body)).toContain('[redacted: opentabs secret]');
    }
    const htmlBefore = (await call('browser_get_page_html', { tabId, selector: '#cfg' })).body.result;
    expect(JSON.stringify(htmlBefore)).not.toContain(secret);
    const html = await call('browser_get_page_html', { tabId, selector: '#cfg', maxLength: '<pre id="cfg">token: '.length + 63 });
    expect(html.status).toBe(200);
    expect(longestPiece(JSON.stringify(html.body), secret)).toBeLessThan(PIECE);
    await call('browser_close_tab', { tabId });
  });

  test("with file:// on, a project's opencode.json is refused", async () => {
    mkdirSync(join(home, 'project'));
    const file = join(home, 'project', 'opencode.json');
    writeFileSync(file, JSON.stringify({ mcp: { opentabs: { type: 'remote', headers: { Authorization: `Bearer ${h.srv.secret}` } } } }, null, 2));
    writeFileSync(join(home, 'project', 'notes.txt'), 'plain notes');
    await h.srv.ctx.config.update((d) => {
      d.allowFileUrls = true;
    });
    h.srv.ctx.hub.sendSyncFull();
    const notes = await waitUntil(async () => {
      const r = await call('browser_open_tab', { url: `file://${join(home, 'project', 'notes.txt')}` });
      return r.status === 200 ? r : null;
    }, 'file:// pages allowed');
    await call('browser_close_tab', { tabId: notes.body.result.id });
    for (const url of [`file://${file}`, `file://${join(home, 'project', 'OpenCode.JSON')}`, `file://${join(home, 'project', 'opencode.jsonc')}`, `file://${join(home, 'project', 'mcp.json')}`]) {
      const r = await call('browser_open_tab', { url });
      expect([url, r.status, r.body.error?.code]).toEqual([url, 403, 'page_not_allowed']);
    }
  });

  test('the secret appears in no response of this file', () => {
    for (const r of responses) expect(longestPiece(JSON.stringify(r.body), h.srv.secret)).toBeLessThan(PIECE);
  });
});
