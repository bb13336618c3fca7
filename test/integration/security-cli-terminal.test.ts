/**
 * Text a web page writes — a plugin's log lines, a tool's error message, progress messages — reaches
 * the user's terminal through `opentabs logs --plugin`, `opentabs tool call` and its status line.
 * Escape sequences in it (OSC 52 puts text on the clipboard, others set the title, erase or rewrite
 * lines) are printed as \uXXXX, never raw; newlines and tabs stay.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, startPluginServer } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

let srv: TestServer;
let ext: FakeExtension;
const HOSTILE = 'hello \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\rfake line\x9b31m';
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'docs', tools: [{ name: 'get', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }, { name: 'slow' }] }], permissions: { docs: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('docs_get', () => {
    throw new FakeToolError('tool_error', `upstream said: ${HOSTILE}`);
  });
  ext.onDispatch('docs_slow', async (_p, api) => {
    api.progress(1, 2, `step ${HOSTILE}`);
    await new Promise((r) => setTimeout(r, 300));
    return { value: { ok: true } };
  });
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const cli = (args: string[]) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir });

describe('page text in the terminal', () => {
  test('opentabs logs --plugin prints a log line\'s escape sequences as \\uXXXX', async () => {
    ext.notify('plugin.log', { entries: [{ plugin: 'docs', level: 'info', message: `line one\n\t${HOSTILE}`, ts: Date.now() }] });
    const r = await (async () => {
      for (let i = 0; i < 50; i++) {
        const x = await cli(['logs', '--plugin', 'docs']);
        if (x.stdout.includes('fake line')) return x;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error('the log line never showed');
    })();
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2K\\u000dfake line\\u009b31m');
    expect(r.stdout).toContain('line one\n\thello');
    // --json is JSON: the text is there, escaped by JSON itself.
    const j = await cli(['logs', '--plugin', 'docs', '--json']);
    expect(j.stdout).not.toMatch(RAW);
    expect(j.stdout).toContain('\\u001b]52');
  });

  test('opentabs tool call prints a tool error and a progress message without raw escapes', async () => {
    const failed = await cli(['tool', 'call', 'docs_get']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('upstream said');
    expect(failed.stderr).not.toMatch(RAW);
    const slow = await cli(['tool', 'call', 'docs_slow']);
    expect(slow.code).toBe(0);
    expect(slow.stderr).toContain('step hello');
    expect(slow.stderr).not.toMatch(RAW);
  });

  test('opentabs audit, status and approvals show errors, tab titles and arguments without raw escapes', async () => {
    const audit = await cli(['audit']);
    expect(audit.stdout).toContain('tool_error');
    expect(audit.stdout).not.toMatch(RAW);

    const m = await ext.request('tab.stateChanged', { plugin: 'docs', state: 'ready', tabs: [{ tabId: 7, url: 'https://docs.example/x', title: `Docs ${HOSTILE}`, ready: true }] });
    expect(m.error).toBeUndefined();
    const status = await cli(['status']);
    expect(status.stdout).toContain('Docs hello');
    expect(status.stdout).not.toMatch(RAW);

    await srv.ctx.config.setToolPermission('docs', 'get', 'ask');
    srv.ctx.catalog.rebuild();
    const pending = fetch(`${srv.url}/tools/docs_get/call`, { method: 'POST', headers: { ...srv.auth, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { q: 'x\u009b31m' } }) }).catch(() => null);
    for (let i = 0; i < 50 && srv.ctx.hub.confirmations.list().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const approvals = await cli(['approvals']);
    expect(approvals.stdout).toContain('docs_get');
    expect(approvals.stdout).not.toMatch(RAW);
    await cli(['deny']);
    await pending;
  });
});
