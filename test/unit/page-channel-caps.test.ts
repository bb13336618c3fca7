/**
 * sanitizePageMessage: what the tab bridge and the service worker let through from a web page.
 * Oversized results become result_too_large, long texts are cut with a mark, malformed fields are
 * dropped or defaulted, and a second pass changes nothing (both the bridge and the worker apply it).
 */
import { describe, expect, test } from 'bun:test';
import { TRUNCATION_MARK, sanitizePageMessage, truncateText, utf8Bytes } from '../../server/protocol/page-channel.ts';
import {
  PAGE_MESSAGE_ID_MAX_CHARS,
  PLUGIN_ERROR_MESSAGE_MAX_CHARS,
  PLUGIN_LOG_DATA_MAX_CHARS,
  PLUGIN_LOG_MESSAGE_MAX_CHARS,
  PLUGIN_PROGRESS_MESSAGE_MAX_CHARS,
  PLUGIN_RESULT_MAX_BYTES,
} from '../../server/limits.ts';

const twice = (m: unknown) => {
  const once = sanitizePageMessage(m);
  expect(sanitizePageMessage(once)).toEqual(once);
  return once as any;
};

describe('sanitizePageMessage', () => {
  test('a result over the limit (counted in UTF-8 bytes) becomes a result_too_large error naming both sizes', () => {
    const chars = Math.ceil(PLUGIN_RESULT_MAX_BYTES / 3) + 10; // under the limit in characters, over it in bytes
    const out = twice({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: '€'.repeat(chars) });
    expect(out).toMatchObject({ type: 'result', id: 'd1', plugin: 'p', ok: false, error: { code: 'result_too_large', category: 'validation', retryable: false } });
    expect(out.error.message).toContain(`${chars * 3 + 2} bytes`);
    expect(out.error.message).toContain(String(PLUGIN_RESULT_MAX_BYTES));
    const ok = twice({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: { a: [1, 2] } });
    expect(ok).toEqual({ type: 'result', id: 'd1', plugin: 'p', ok: true, value: { a: [1, 2] } });
  });

  test('error results: message cut, unknown code/category dropped, extras typed', () => {
    const out = twice({ type: 'result', id: 'x', plugin: 'p', ok: false, error: { message: 'e'.repeat(PLUGIN_ERROR_MESSAGE_MAX_CHARS + 5), code: 'Not A Code', category: 'pwned', retryable: 'yes', retryAfterMs: 5, extra: 'x' } });
    expect(out.error.code).toBe('tool_error');
    expect(out.error.category).toBeUndefined();
    expect(out.error.retryable).toBeUndefined();
    expect(out.error.retryAfterMs).toBe(5);
    expect(out.error.extra).toBeUndefined();
    expect(out.error.message).toContain(TRUNCATION_MARK);
  });

  test('log lines: message and data cut with a mark, bad level defaulted, over-long ids dropped', () => {
    const out = twice({ type: 'log', plugin: 'p', level: 'critical', message: 'm'.repeat(11 * 1024 * 1024), data: { s: '"\\'.repeat(PLUGIN_LOG_DATA_MAX_CHARS) }, ts: 'now' });
    expect(out.level).toBe('info');
    expect(typeof out.ts).toBe('number');
    expect(out.message.length).toBeLessThanOrEqual(PLUGIN_LOG_MESSAGE_MAX_CHARS);
    expect(out.message).toContain(TRUNCATION_MARK);
    expect(typeof out.data).toBe('string');
    expect(JSON.stringify(out.data).length).toBeLessThanOrEqual(PLUGIN_LOG_DATA_MAX_CHARS);
    expect(out.data).toContain(TRUNCATION_MARK);
    expect(sanitizePageMessage({ type: 'log', plugin: 'p', id: 'i'.repeat(PAGE_MESSAGE_ID_MAX_CHARS + 1), level: 'info', message: 'x', ts: 1 })).toBeNull();
    expect(sanitizePageMessage({ type: 'log', plugin: 'p'.repeat(PAGE_MESSAGE_ID_MAX_CHARS + 1), level: 'info', message: 'x', ts: 1 })).toBeNull();
  });

  test('progress: a number or nothing, message cut', () => {
    expect(sanitizePageMessage({ type: 'progress', id: 'd', plugin: 'p', progress: 'half' })).toBeNull();
    const out = twice({ type: 'progress', id: 'd', plugin: 'p', progress: 1, total: 'x', message: 'p'.repeat(PLUGIN_PROGRESS_MESSAGE_MAX_CHARS * 2) });
    expect(out.total).toBeUndefined();
    expect(out.message).toContain(TRUNCATION_MARK);
  });

  test('unknown types and non-objects are dropped', () => {
    for (const m of [null, 'x', 42, { type: 'call', id: 'd', plugin: 'p' }, { type: 'result', plugin: 'p', ok: true }]) expect(sanitizePageMessage(m)).toBeNull();
  });
});

test('utf8Bytes and truncateText', () => {
  expect(utf8Bytes('aé€😀')).toBe(1 + 2 + 3 + 4);
  expect(utf8Bytes('€'.repeat(5000))).toBe(15000);
  // Never cuts a surrogate pair in half.
  const max = 100;
  const len = 300;
  const cutAt = max - `… ${TRUNCATION_MARK}: ${len} characters, limit ${max}]`.length;
  // The cut falls between the two halves of an emoji: the whole emoji goes.
  const text = 'a'.repeat(cutAt - 1) + '😀' + 'b'.repeat(len - cutAt - 1);
  expect(text.length).toBe(len);
  const cut = truncateText(text, max);
  expect(cut.length).toBeLessThanOrEqual(max);
  expect(cut.slice(0, cut.indexOf('…'))).toBe('a'.repeat(cutAt - 1));
  expect(cut).toContain(TRUNCATION_MARK);
  expect(truncateText(cut, max)).toBe(cut);
  expect(truncateText('short', 10)).toBe('short');
});
