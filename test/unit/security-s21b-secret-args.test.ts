/** Masking argument values that look like secrets in a recorded error message (server/tools/secret-args.ts). */
import { expect, test } from 'bun:test';
import { maskValues, secretArgValues } from '../../server/tools/secret-args.ts';
import { SECRET_MASK } from '../../server/protocol/secret-values.ts';

test('values are secret by key or by form; numbers under a secret key too; short and plain values are not', () => {
  const values = secretArgValues({ pin: 4921, nested: { apiKey: 'abc-123', list: [{ token: 'tok' }] }, q: 'sk_live_51Hx9aQ2eZvKYlo2C8r4TmWq', word: 'hello there', otp: '12' });
  expect(values.sort()).toEqual(['4921', 'abc-123', 'sk_live_51Hx9aQ2eZvKYlo2C8r4TmWq', 'tok'].sort());
});

test('a secret running past the kept length is masked whole, not kept in part', () => {
  const secret = 'Zq8'.repeat(20);
  const text = `${'x'.repeat(90)}${secret}${'y'.repeat(500)}`;
  const out = maskValues(text, secretArgValues({ password: secret }), 100);
  expect(out.slice(0, 100)).toBe(`${'x'.repeat(90)}${SECRET_MASK}${'y'.repeat(100 - 90 - SECRET_MASK.length)}`);
  expect(out).not.toContain('Zq8');
});

test('a value JSON-quoted in the message is found as quoted', () => {
  const pw = 'a "quoted" pass';
  expect(maskValues(`received ${JSON.stringify(pw)}`, secretArgValues({ password: pw }), 2000)).toBe(`received "${SECRET_MASK}"`);
});

test('the walk is bounded: deep and long argument lists end', () => {
  let deep: unknown = 'sk_live_51Hx9aQ2eZvKYlo2C8r4TmWq';
  for (let i = 0; i < 100_000; i++) deep = [deep];
  expect(secretArgValues(deep)).toEqual([]);
  expect(secretArgValues({ password: Array.from({ length: 50_000 }, (_, i) => `secret-${i}`) }).length).toBeLessThanOrEqual(1000);
});
