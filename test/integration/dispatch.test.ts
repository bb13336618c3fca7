/**
 * Dispatch to the extension: invocationStart/End, timeouts (and their extension by progress, and
 * the total cap), the per-plugin concurrency gate, cancellation by a client abort, error mapping,
 * tabId/settings passing and server-served catalog tools.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, FakeToolError, hang, startPluginServer } from '../harness/fake-extension.ts';

let srv: TestServer;
let ext: FakeExtension;

const call = (name: string, args: unknown = {}, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
  fetch(`${srv.url}/tools/${name}/call`, {
    method: 'POST',
    headers: { ...srv.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args, ...extra }),
    signal,
  });

async function until(cond: () => boolean, what: string, max = 300): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (cond()) return;
    await Bun.sleep(10);
  }
  throw new Error(`never happened: ${what}`);
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [
      { name: 'alpha', tools: [{ name: 'work' }, { name: 'fast' }] },
      { name: 'beta', tools: [{ name: 'work' }] },
    ],
    permissions: { alpha: { default: 'auto' }, beta: { default: 'auto' } },
    // Base timeout well above the progress interval below, so a loaded machine's stalls don't
    // decide the outcome; the total cap stays below the progress loop's own length.
    limits: { dispatchTimeoutMs: 1000, dispatchMaxTotalMs: 3000 },
  });
  // No plugin tabs reported: the tab-state tests below set their own.
  ext = await FakeExtension.connect(srv.url, srv.secret, { pluginTabs: false });
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

describe('dispatch', () => {
  test('without an open side panel no invocationStart/End is sent', async () => {
    ext.onDispatch('alpha_fast', (p) => ({ value: { got: p } }));
    const before = ext.sent('tool.invocationStart').length + ext.sent('tool.invocationEnd').length;
    const res = await call('alpha_fast');
    expect(res.status).toBe(200);
    // The dispatch itself went out and was answered; nothing for a panel that is not there.
    expect(ext.sent('tool.invocationStart').length + ext.sent('tool.invocationEnd').length).toBe(before);
  });

  test('tool.dispatch carries plugin, short tool name, input, tabId and settings; with a side panel open, invocationStart/End surround it', async () => {
    ext.notify('panel.state', { open: true });
    ext.onDispatch('alpha_fast', (p) => ({ value: { got: p } }));
    await Bun.sleep(50);
    const res = await call('alpha_fast', {}, { tabId: 12 });
    expect(res.status).toBe(200);
    const { result } = await res.json();
    expect(result.got).toMatchObject({ plugin: 'alpha', tool: 'fast', input: {}, tabId: 12, settings: {} });
    const id = result.got.dispatchId;
    const start = await ext.waitFor('tool.invocationStart', (p) => p.dispatchId === id);
    const end = await ext.waitFor('tool.invocationEnd', (p) => p.dispatchId === id);
    expect(start).toMatchObject({ tool: 'alpha_fast', plugin: 'alpha' });
    expect(end).toMatchObject({ tool: 'alpha_fast', plugin: 'alpha', success: true });
    expect(end.durationMs).toBeGreaterThanOrEqual(0);
    // The panel closed: the events stop again.
    ext.notify('panel.state', { open: false });
    await Bun.sleep(50);
    const count = ext.sent('tool.invocationStart').length;
    expect((await call('alpha_fast')).status).toBe(200);
    expect(ext.sent('tool.invocationStart').length).toBe(count);
  });

  test('built-in tools are dispatched with plugin "browser" and their full name', async () => {
    const res = await call('browser_list_tabs');
    const { result } = await res.json();
    expect(result).toMatchObject({ plugin: 'browser', tool: 'browser_list_tabs' });
  });

  test('a call with no answer times out (504) and the extension gets tool.cancel', async () => {
    ext.onDispatch('alpha_work', hang);
    const res = await call('alpha_work');
    expect(res.status).toBe(504);
    const body = await res.json();
    expect(body.error.code).toBe('timeout');
    expect(body.error.message).toContain('timed out');
    const d = ext.sent('tool.dispatch').at(-1)!;
    await until(() => ext.cancels.some((c) => c.dispatchId === d.params.dispatchId && c.reason === 'timeout'), 'tool.cancel on timeout');
  });

  test('progress extends the timeout beyond the base', async () => {
    // Base 1 s; the handler runs ~2.5 s but reports progress every 100 ms.
    ext.onDispatch('alpha_work', async (_p, api) => {
      for (let i = 1; i <= 25; i++) {
        await Bun.sleep(100);
        api.progress(i, 25);
      }
      return { value: { finished: true } };
    });
    const res = await call('alpha_work');
    expect(res.status).toBe(200);
    expect((await res.json()).result).toEqual({ finished: true });
  });

  test('progress never extends a call beyond the total cap', async () => {
    let stop = false;
    ext.onDispatch('alpha_work', async (_p, api) => {
      for (let i = 1; i <= 200 && !stop; i++) {
        await Bun.sleep(50);
        api.progress(i);
      }
      return { value: 'late' };
    });
    try {
      const res = await call('alpha_work');
      expect(res.status).toBe(504);
      expect((await res.json()).error.code).toBe('timeout');
    } finally {
      stop = true;
    }
  });

  test('the 6th concurrent call to one plugin is refused at once; other plugins are unaffected; slots free up', async () => {
    const releases: (() => void)[] = [];
    ext.onDispatch('alpha_work', () => new Promise((resolve) => releases.push(() => resolve({ value: 'done' }))));
    // Long enough not to time out while we look (progress keeps them alive).
    const inflight = Array.from({ length: 5 }, () => call('alpha_work'));
    await until(() => releases.length === 5, 'five dispatched');
    const sixth = await call('alpha_work');
    expect(sixth.status).toBe(429);
    const body = await sixth.json();
    expect(body.error.code).toBe('too_many_in_flight');
    // When to retry, in the message, in the body and in the standard header.
    expect(body.error.message).toContain('Retry in about 1 s');
    expect(body.error.retryAfterMs).toBe(1000);
    expect(sixth.headers.get('retry-after')).toBe('1');
    // Another plugin still has its own slots.
    ext.onDispatch('beta_work', () => ({ value: 'beta ok' }));
    const beta = await call('beta_work');
    expect(beta.status).toBe(200);
    for (const r of releases) r();
    const done = await Promise.all(inflight);
    expect(done.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(srv.ctx.gate.count('alpha')).toBe(0);
    ext.onDispatch('alpha_work', () => ({ value: 'again' }));
    expect((await call('alpha_work')).status).toBe(200);
  });

  test('a client abort (HTTP request closed) cancels the dispatch and frees the slot', async () => {
    ext.onDispatch('alpha_work', hang);
    const ac = new AbortController();
    const p = call('alpha_work', {}, {}, ac.signal).catch((e) => e);
    const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'work');
    ac.abort();
    await p;
    await until(() => ext.cancels.some((c) => c.dispatchId === d.params.dispatchId), 'tool.cancel on abort');
    await until(() => srv.ctx.gate.count('alpha') === 0, 'slot freed');
  });

  test('extension errors map to codes, statuses and actionable messages', async () => {
    ext.onDispatch('alpha_fast', () => {
      throw new FakeToolError('no_matching_tab', 'No tab matches alpha');
    });
    const r1 = await call('alpha_fast');
    expect(r1.status).toBe(409);
    const b1 = await r1.json();
    expect(b1.error.code).toBe('no_matching_tab');
    expect(b1.error.message).toContain('Open');

    ext.onDispatch('alpha_fast', () => {
      throw new FakeToolError('tab_closed', 'The tab closed during the call');
    });
    const r2 = await call('alpha_fast');
    expect(r2.status).toBe(409);
    expect((await r2.json()).error.code).toBe('tab_closed');

    ext.onDispatch('alpha_fast', () => {
      throw new FakeToolError('tool_error', 'Slack says: channel_not_found', { category: 'not_found', retryable: false });
    });
    const r3 = await call('alpha_fast');
    expect(r3.status).toBe(502);
    const b3 = await r3.json();
    expect(b3.error).toMatchObject({ code: 'tool_error', category: 'not_found', retryable: false, message: 'Slack says: channel_not_found' });

    ext.onDispatch('alpha_fast', () => ({ images: 'not an array' }) as never);
    const r4 = await call('alpha_fast');
    expect(r4.status).toBe(500);
    expect((await r4.json()).error.message).toContain('malformed');
  });

  test('every call is audited, failures with their error code', async () => {
    const entries = srv.ctx.audit.query({ limit: 500, tool: 'alpha_fast' });
    expect(entries.some((e) => e.success)).toBe(true);
    expect(entries.some((e) => !e.success && e.error?.code === 'no_matching_tab')).toBe(true);
  });
});

describe('server-served tools', () => {
  test('plugin_list_tabs answers from the hub tab state without the extension', async () => {
    const { serverToolHandler } = await import('../../server/tools/server-tools.ts');
    const listTabs = serverToolHandler('plugin_list_tabs')!;
    expect(listTabs).toBeFunction();
    // It calls no other tool: a callAnother that fails the test if used.
    const handler = (ctx: typeof srv.ctx, args: Record<string, unknown>) => listTabs(ctx, args, () => Promise.reject(new Error('plugin_list_tabs called another tool')));
    const tab = { tabId: 3, url: 'http://127.0.0.1/a', title: 'A', ready: true };
    ext.notify('tab.syncAll', { plugins: { alpha: { state: 'ready', tabs: [tab] } } });
    await until(() => srv.ctx.hub.tabsFor('alpha').state === 'ready', 'tab state');
    const all = (await handler(srv.ctx, {})) as { plugins: { plugin: string; state: string; tabs: unknown[] }[] };
    expect(all.plugins.find((p) => p.plugin === 'alpha')).toMatchObject({ state: 'ready', tabs: [tab] });
    expect(all.plugins.find((p) => p.plugin === 'beta')).toMatchObject({ state: 'closed', tabs: [] });
    const one = (await handler(srv.ctx, { plugin: 'beta' })) as { plugins: unknown[] };
    expect(one.plugins.length).toBe(1);
    expect(() => handler(srv.ctx, { plugin: 'ghost' })).toThrow('Unknown plugin');
    expect(serverToolHandler('toString')).toBeUndefined();
  });
});
