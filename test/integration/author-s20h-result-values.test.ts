/**
 * A handler returning a value JSON cannot carry: a Map, a Set, a Promise (a missing await), an
 * Error, binary data or a BigInt fails the call naming where in the result it is and what to
 * return instead, rather than reaching the agent as `{}`. runTool checks results as the page does.
 */
import { expect, test } from 'bun:test';
import * as v from 'valibot';
import { definePlugin, defineTool } from '../../plugins/sdk/index.ts';
import { runTool } from '../../plugins/sdk/testing.ts';
import { sendableResult } from '../../plugins/sdk/execute.ts';

const values: Record<string, () => unknown> = {
  map: () => new Map([['a', 1]]),
  nestedMap: () => ({ rows: [{ id: 1, byTag: new Map() }] }),
  set: () => ({ tags: new Set(['x']) }),
  promise: () => ({ items: Promise.resolve([1]) }),
  error: () => ({ ok: false, error: new Error('quota') }),
  bytes: () => ({ file: new Uint8Array([1, 2, 3]) }),
  bigint: () => ({ total: 10n }),
  cycle: () => {
    const user: Record<string, unknown> = { id: 1 };
    user.team = { name: 't', members: [user] };
    return { user };
  },
  plain: () => ({ when: new Date(0), empty: {}, list: [], text: 'a {} in text', n: null }),
};

const plugin = definePlugin({
  name: 'values',
  displayName: 'Values',
  description: 'Returns values',
  urlPatterns: ['http://127.0.0.1/*'],
  isReady: () => true,
  tools: [
    defineTool({
      name: 'give',
      description: 'Return one kind of value.',
      input: v.object({ kind: v.string() }),
      output: v.unknown(),
      async handle(input) {
        return values[input.kind]!();
      },
    }),
  ],
});

async function messageFor(kind: string): Promise<string> {
  const { outcome } = await runTool(plugin, 'give', { kind });
  expect(outcome.ok).toBe(false);
  if (outcome.ok) throw new Error('unreachable');
  expect(outcome.error).toMatchObject({ code: 'unserializable_result', category: 'internal', retryable: false });
  return outcome.error.message;
}

const PREFIX = 'values_give returned a value that cannot be sent as JSON: ';

test('a Map, as the result or deep in it, is named with its place and what to return', async () => {
  expect(await messageFor('map')).toBe(`${PREFIX}a Map as the result (JSON would send it as {}); return Object.fromEntries(map) (string keys) or [...map] (entries)`);
  expect(await messageFor('nestedMap')).toStartWith(`${PREFIX}a Map at rows.0.byTag (JSON would send it as {})`);
});

test('a Set, a Promise (missing await), an Error and bytes: each named with the fix', async () => {
  expect(await messageFor('set')).toBe(`${PREFIX}a Set at tags (JSON would send it as {}); return [...set]`);
  expect(await messageFor('promise')).toBe(`${PREFIX}a Promise at items (JSON would send it as {}); await it (an \`await\` is missing) before returning`);
  expect(await messageFor('error')).toContain(`${PREFIX}an Error at error (JSON would send it as {}); throw it`);
  expect(await messageFor('bytes')).toContain(`${PREFIX}binary data (an ArrayBuffer or typed array) at file`);
  expect(await messageFor('bytes')).toContain('bytesToBase64(bytes)');
});

test('a BigInt and a cycle name their place', async () => {
  expect(await messageFor('bigint')).toBe(`${PREFIX}a BigInt at total; return Number(value) or String(value)`);
  const cycle = await messageFor('cycle');
  expect(cycle).toStartWith(`${PREFIX}user.team.members.0 refers back to an object that contains it (a circular reference`);
});

test('plain data with empty objects, a Date and "{}" in a string is sent as it is', async () => {
  const { outcome } = await runTool(plugin, 'give', { kind: 'plain' });
  expect(outcome).toEqual({ ok: true, value: { when: new Date(0), empty: {}, list: [], text: 'a {} in text', n: null } });
  const sent = sendableResult('values_give', values.plain!());
  expect(sent.ok && JSON.parse(sent.json)).toEqual({ when: '1970-01-01T00:00:00.000Z', empty: {}, list: [], text: 'a {} in text', n: null });
});

test('the same object twice (not a cycle) is fine', () => {
  const shared = { id: 1 };
  const sent = sendableResult('values_give', { a: shared, b: [shared, shared] });
  expect(sent.ok).toBe(true);
});
