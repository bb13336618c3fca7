import { expect, test } from 'bun:test';
import { ago } from '../../cli/commands/doctor.ts';

test('doctor says how long ago in seconds under a minute, not "1 min ago" for a refusal just now', () => {
  expect(ago(0)).toBe('0 s ago');
  expect(ago(4_400)).toBe('4 s ago');
  expect(ago(59_000)).toBe('59 s ago');
  expect(ago(60_000)).toBe('1 min ago');
  expect(ago(7 * 60_000 + 20_000)).toBe('7 min ago');
});
