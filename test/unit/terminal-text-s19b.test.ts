/** output.ts: printable() and terminalText(), the one reading of text shown on a terminal. */
import { describe, expect, test } from 'bun:test';
import { printable, terminalText } from '../../cli/output.ts';

describe('printable', () => {
  test('keeps newlines, tabs and visible text; escapes controls, bidi and invisible characters', () => {
    expect(printable('a\nb\tc é 日本 ✓')).toBe('a\nb\tc é 日本 ✓');
    expect(printable('\x1b[2J\r\b\x7f\x9b\u0085')).toBe('\\u001b[2J\\u000d\\u0008\\u007f\\u009b\\u0085');
    expect(printable('\u202e\u2066\u200e\u061c\u200b\u200d\u00ad\u2028\u2029\ufeff\u3164\ufe0f\u180e')).toBe(
      '\\u202e\\u2066\\u200e\\u061c\\u200b\\u200d\\u00ad\\u2028\\u2029\\ufeff\\u3164\\ufe0f\\u180e',
    );
  });

  test('tag characters come out as their UTF-16 halves, so escaped JSON text stays JSON', () => {
    const shown = printable(JSON.stringify({ t: 'x\u{e0041}' }));
    expect(shown).toBe('{"t":"x\\udb40\\udc41"}');
    expect((JSON.parse(shown) as { t: string }).t).toBe('x\u{e0041}');
  });
});

describe('terminalText', () => {
  test('keeps the CLI\'s own colour sequences only', () => {
    expect(terminalText('\x1b[1mServer\x1b[0m \x1b[32mok\x1b[0m \x1b[2mdim\x1b[0m')).toBe('\x1b[1mServer\x1b[0m \x1b[32mok\x1b[0m \x1b[2mdim\x1b[0m');
    // Conceal, background colours, cursor moves, OSC: shown.
    expect(terminalText('\x1b[8mhidden\x1b[41m\x1b[1A\x1b]52;c;eA==\x07')).toBe('\\u001b[8mhidden\\u001b[41m\\u001b[1A\\u001b]52;c;eA==\\u0007');
    // An own sequence cut short is not one.
    expect(terminalText('\x1b[3')).toBe('\\u001b[3');
    expect(terminalText('a\u202eb\rc')).toBe('a\\u202eb\\u000dc');
  });
});
