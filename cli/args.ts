/**
 * Flag parsing on top of node:util parseArgs: strict (unknown flags are usage errors naming the
 * flag), positionals allowed, and `-h/--help` on every command.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Parsed<V> {
  values: V & { help?: boolean };
  positionals: string[];
}

export function parse<O extends Options>(argv: string[], options: O, command: string) {
  try {
    const r = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return r as unknown as { values: ParsedValues<O> & { help?: boolean }; positionals: string[] };
  } catch (e) {
    // parseArgs messages already name the flag ("Unknown option '--x'"); keep them, add the hint.
    throw usageError(String((e as Error).message).replace(/\. To specify a positional.*$/s, '.'), command);
  }
}

type ParsedValues<O extends Options> = {
  [K in keyof O]?: O[K] extends { type: 'boolean'; multiple: true }
    ? boolean[]
    : O[K] extends { type: 'boolean' }
      ? boolean
      : O[K] extends { multiple: true }
        ? string[]
        : string;
};

/** A TCP port from a flag or env value: integer 0–65535 (0 only where `allowZero`). */
export function parsePort(raw: string, source: string, allowZero: boolean, command: string): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1) || n > 65535) {
    throw usageError(`Invalid port ${JSON.stringify(raw)} from ${source}: expected an integer ${allowZero ? '0' : '1'}–65535.`, command);
  }
  return n;
}

/** A positive integer flag (e.g. --limit, --tab-id). */
export function parsePositiveInt(raw: string, flag: string, command: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw usageError(`Invalid ${flag} ${JSON.stringify(raw)}: expected an integer 1–${max}.`, command);
  }
  return n;
}

/** Parse `true|false` (also yes/no, 1/0, on/off). */
export function parseBool(raw: string, what: string, command: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['true', 'yes', '1', 'on'].includes(v)) return true;
  if (['false', 'no', '0', 'off'].includes(v)) return false;
  throw usageError(`Invalid ${what} ${JSON.stringify(raw)}: expected true or false.`, command);
}
