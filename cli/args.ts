/**
 * Flag parsing: strict (unknown flags are usage errors naming the flag), positionals allowed, and
 * `-h/--help` on every command. It follows node:util parseArgs (strict, allowPositionals) for the
 * forms the commands use — `--flag`, `--opt value`, `--opt=value`, `-f`, `-o value`, `-ovalue`,
 * grouped short booleans, `multiple`, `--` — with the same messages; test/unit/cli-args.test.ts
 * checks it against parseArgs case by case. It is not node:util's because loading that module costs
 * Bun ≈ 3.5 ms, on every CLI command and before `opentabs start` can load the server.
 */
import { usageError } from './output.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
}
type Options = Record<string, OptionSpec>;

export interface Parsed<V> {
  values: V & { help?: boolean };
  positionals: string[];
}

export function parse<O extends Options>(argv: string[], options: O, command: string) {
  try {
    return parseFlags(argv, { ...options, help: { type: 'boolean', short: 'h' } }) as unknown as { values: ParsedValues<O> & { help?: boolean }; positionals: string[] };
  } catch (e) {
    throw usageError((e as Error).message, command);
  }
}

/** The parser itself (exported for its parity test); throws an Error whose message names the flag. */
export function parseFlags(argv: string[], options: Options): { values: Record<string, string | boolean | (string | boolean)[]>; positionals: string[] } {
  const values: Record<string, string | boolean | (string | boolean)[]> = Object.create(null);
  const positionals: string[] = [];
  const byShort = new Map(Object.entries(options).flatMap(([name, o]) => (o.short ? [[o.short, name] as const] : [])));
  const store = (name: string, value: string | boolean) => {
    if (!options[name]!.multiple) values[name] = value;
    else if (Array.isArray(values[name])) values[name].push(value);
    else values[name] = [value];
  };
  const spelled = (name: string) => {
    const short = options[name]!.short;
    return short ? `-${short}, --${name}` : `--${name}`;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    /** The value of a string option from the next argument (refused when missing or dash-led). */
    const nextValue = (name: string, typed: string): string => {
      const next = argv[i + 1];
      if (next === undefined) throw new Error(`Option '${spelled(name)} <value>' argument missing`);
      if (next.startsWith('-')) {
        const fix = typed.startsWith('--') ? `'${typed}=-XYZ'` : `'--${name}=-XYZ' or '${typed}-XYZ'`;
        throw new Error(`Option '${typed}' argument is ambiguous.\nDid you forget to specify the option argument for '${typed}'?\nTo specify an option argument starting with a dash use ${fix}.`);
      }
      i++;
      return next;
    };
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const o = Object.hasOwn(options, name) ? options[name] : undefined;
      if (!o) throw new Error(`Unknown option '--${name}'.`);
      if (o.type === 'boolean') {
        if (eq !== -1) throw new Error(`Option '${spelled(name)}' does not take an argument`);
        store(name, true);
      } else store(name, eq !== -1 ? arg.slice(eq + 1) : nextValue(name, `--${name}`));
      continue;
    }
    if (arg.length > 1 && arg.startsWith('-')) {
      // Short flags, possibly grouped (-fv); a string one takes the rest of the group as its value
      // (-n20, -fn20), or the next argument when it ends the group (-n 20, -fn 20).
      for (let j = 1; j < arg.length; j++) {
        const ch = arg[j]!;
        const name = byShort.get(ch);
        if (!name) throw new Error(`Unknown option '${arg.length === 2 ? arg : ch}'.`);
        if (options[name]!.type === 'boolean') store(name, true);
        else {
          // parseArgs names a flag inside a group by its letter alone, in both messages.
          store(name, j + 1 < arg.length ? arg.slice(j + 1) : nextValue(name, arg.length === 2 ? arg : ch));
          break;
        }
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values, positionals };
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
    throw usageError(`Invalid ${flag} ${JSON.stringify(raw)}: expected ${max === Number.MAX_SAFE_INTEGER ? 'a whole number of 1 or more' : `an integer 1–${max}`}.`, command);
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
