/**
 * cli/args.ts parses flags itself (node:util costs Bun ≈ 3.5 ms to load on every CLI command):
 * for every form the commands use, and for each kind of mistake, it must give what node:util
 * parseArgs (strict, positionals allowed) gives — the same values and positionals, or an error
 * with the same message (less parseArgs' hint about '--', which the CLI always dropped).
 */
import { expect, test } from 'bun:test';
import { parseArgs } from 'node:util';
import { parse, parseFlags, type OptionSpec } from '../../cli/args.ts';

const OPTIONS: Record<string, OptionSpec> = {
  port: { type: 'string' },
  dev: { type: 'boolean' },
  follow: { type: 'boolean', short: 'f' },
  lines: { type: 'string', short: 'n' },
  tag: { type: 'string', multiple: true },
  verbose: { type: 'boolean', short: 'v', multiple: true },
  help: { type: 'boolean', short: 'h' },
};

const CASES: string[][] = [
  [],
  ['a', 'b'],
  ['--dev'],
  ['--port', '9515'],
  ['--port=9515'],
  ['--port='],
  ['--port', ''],
  ['--port=-1'],
  ['--port', '-1'],
  ['--port'],
  ['--port', '--dev'],
  ['--dev=yes'],
  ['--nope'],
  ['--nope=1'],
  ['-f'],
  ['-n', '20'],
  ['-n20'],
  ['-n'],
  ['-n', '-3'],
  ['-fv'],
  ['-fn', '5'],
  ['-nf'],
  ['-vv'],
  ['-x'],
  ['-fx'],
  ['-'],
  ['-5'],
  ['--'],
  ['--', '--dev', '-f', 'x'],
  ['x', '--', 'y'],
  ['--tag', 'a', '--tag=b', 'pos', '--tag', 'c'],
  ['-v', '--verbose', '-v'],
  ['--help'],
  ['-h', 'extra'],
  ['--dev', '--dev'],
  ['--port', '1', '--port', '2'],
  ['call', 'browser_list_tabs', '{"a":1}', '--port', '9515'],
  ['--__proto__'],
  ['--constructor'],
  ['-fn'],
  ['-nf'],
  ['-fnx'],
  ['-xf'],
  ['-fvn', '3'],
  ['-fn', '-3'],
  ['--lines', '-3'],
  ['--lines'],
  ['--follow=1'],
  ['-f=1'],
  ['-n='],
  ['--lines=a=b'],
];

function viaNode(argv: string[]): unknown {
  try {
    const r = parseArgs({ args: argv, options: OPTIONS as never, allowPositionals: true, strict: true }) as { values: Record<string, unknown>; positionals: string[] };
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (e) {
    return { error: String((e as Error).message).replace(/\. To specify a positional.*$/s, '.') };
  }
}

function viaOurs(argv: string[]): unknown {
  try {
    const r = parseFlags(argv, OPTIONS);
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

test.each(CASES.map((c) => [JSON.stringify(c), c] as const))('%s parses as node:util parseArgs does', (_label, argv) => {
  expect(viaOurs(argv)).toEqual(viaNode(argv));
});

test('parse() turns a mistake into a usage error naming the flag and the command help', () => {
  expect(() => parse(['--bogus'], { port: { type: 'string' } }, 'start')).toThrow("Unknown option '--bogus'.\nRun `opentabs start --help` for usage.");
  const ok = parse(['--port', '0', '-h'], { port: { type: 'string' } }, 'start');
  expect(ok.values.port).toBe('0');
  expect(ok.values.help).toBe(true);
});
