/**
 * Cards of pages asking for the user's input (requestUserInteraction, pageTools.interaction from
 * the extension) have a budget of their own, MAX_PENDING_INTERACTIONS in all and
 * MAX_PENDING_APPROVALS_PER_CALLER per origin, and take none of the MAX_PENDING_APPROVALS slots of
 * the agents' approvals: pages asking at their limit leave every approval slot to the agents, and
 * agents at theirs leave the pages' budget whole. Over MCP (official SDK client) with a fake extension.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';
import { MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_CALLER, MAX_PENDING_INTERACTIONS } from '../../server/limits.ts';

setDefaultTimeout(90_000);
let srv: TestServer;
let ext: FakeExtension;
const clients: Client[] = [];

type CallResult = { isError?: boolean; content: { type: string; text?: string }[] };
const textOf = (r: CallResult) => r.content.map((c) => c.text ?? '').join('\n');
const waiting = () => srv.ctx.hub.confirmations.list();
const cards = () => waiting().filter((c) => c.interaction === true).length;
const approvals = () => waiting().filter((c) => c.interaction !== true).length;

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'mail', tools: [{ name: 'send', inputSchema: { type: 'object', properties: { to: { type: 'string' } } } }] }],
    permissions: { mail: { default: 'ask' } },
    limits: { mcpSessionRate: { max: 100, windowMs: 60_000 }, pluginMaxConcurrency: 50 },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.notify('tab.syncAll', { plugins: { mail: { state: 'ready', tabs: [{ tabId: 7, url: 'https://mail.example/inbox', title: 'Inbox', ready: true }] } } });
  await until(() => srv.ctx.hub.tabsFor('mail').tabs.length === 1, 'the mail tab to be known');
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
});

let nextDispatch = 0;
/** A page of `site` asks for the user's input during its checkout tool; the answer (or error) once the card ends. */
function pageAsks(site: string): { dispatchId: string; answer: Promise<{ result?: { answer: string }; error?: { message: string; data?: { code?: string; message?: string } } }> } {
  const dispatchId = `page-call-${nextDispatch++}`;
  const origin = `https://${site}.example`;
  const answer = ext.request('pageTools.interaction', { dispatchId, tabId: 500 + nextDispatch, url: `${origin}/cart`, origin, tool: 'checkout' }, 60_000) as Promise<never>;
  return { dispatchId, answer };
}

/** Agents ask for `n` approvals from sessions of their own (MAX_PENDING_APPROVALS_PER_CALLER each); their calls, under way. */
async function agentsAsk(n: number): Promise<Promise<CallResult>[]> {
  const calls: Promise<CallResult>[] = [];
  for (let i = 0; calls.length < n; i++) {
    const c = await connectMcp(srv.url, srv.secret, '/mcp', `agent-${clients.length}`);
    clients.push(c);
    const before = approvals();
    const want = Math.min(MAX_PENDING_APPROVALS_PER_CALLER, n - calls.length);
    for (let j = 0; j < want; j++) calls.push(c.callTool({ name: 'mail_send', arguments: { to: `a${i}-${j}@example.com` } }) as Promise<CallResult>);
    await until(() => approvals() === before + want, `${before + want} approvals waiting`);
  }
  return calls;
}

test('pages at their limit of cards leave all the approval slots to the agents', async () => {
  // One origin at its own cap, then others up to the pages' budget in all.
  const asked: ReturnType<typeof pageAsks>[] = [];
  for (let i = 0; i < MAX_PENDING_INTERACTIONS; i++) asked.push(pageAsks(i < MAX_PENDING_APPROVALS_PER_CALLER ? 'shop' : `other${i}`));
  await until(() => cards() === MAX_PENDING_INTERACTIONS, `${MAX_PENDING_INTERACTIONS} cards waiting`);
  const overOrigin = await pageAsks('shop').answer;
  expect(overOrigin.error?.data).toMatchObject({
    code: 'too_many_pending_approvals',
    message: `The user was not asked: ${MAX_PENDING_APPROVALS_PER_CALLER} requests of this page's origin for the user's input already wait in the OpenTabs side panel (limit ${MAX_PENDING_APPROVALS_PER_CALLER}). Ask the user to answer them there, then retry checkout.`,
  });
  const overAll = await pageAsks('newcomer').answer;
  expect(overAll.error?.data).toMatchObject({
    code: 'too_many_pending_approvals',
    message: `The user was not asked: ${MAX_PENDING_INTERACTIONS} requests of pages for the user's input already wait in the OpenTabs side panel (limit ${MAX_PENDING_INTERACTIONS}). Ask the user to answer them there, then retry checkout.`,
  });
  expect(cards()).toBe(MAX_PENDING_INTERACTIONS);

  // Every approval slot is still the agents'; one more is refused by the approvals' own cap.
  const calls = await agentsAsk(MAX_PENDING_APPROVALS);
  expect(approvals()).toBe(MAX_PENDING_APPROVALS);
  const late = await connectMcp(srv.url, srv.secret, '/mcp', 'late-agent');
  clients.push(late);
  const refused = (await late.callTool({ name: 'mail_send', arguments: { to: 'late@example.com' } })) as CallResult;
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toContain('too_many_pending_approvals');
  expect(textOf(refused)).toContain(`limit ${MAX_PENDING_APPROVALS}`);

  // The pages' calls end: their cards go, and new ones fit again beside the agents' full slots.
  for (const a of asked) ext.notify('pageTools.interactionDone', { dispatchId: a.dispatchId });
  for (const a of asked) expect((await a.answer).result).toEqual({ answer: 'ended' });
  expect(cards()).toBe(0);
  const again: ReturnType<typeof pageAsks>[] = [];
  for (let i = 0; i < MAX_PENDING_INTERACTIONS; i++) again.push(pageAsks(`again${i}`));
  await until(() => cards() === MAX_PENDING_INTERACTIONS, `${MAX_PENDING_INTERACTIONS} new cards beside ${MAX_PENDING_APPROVALS} approvals`);
  expect(approvals()).toBe(MAX_PENDING_APPROVALS);

  // The user answers: every card and approval ends.
  for (const c of waiting()) ext.confirm(c.id, 'deny');
  for (const a of again) expect((await a.answer).result).toEqual({ answer: 'decline' });
  for (const r of await Promise.all(calls)) expect(textOf(r)).toContain('permission_denied');
  expect(waiting()).toEqual([]);
});
