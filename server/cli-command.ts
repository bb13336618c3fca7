/**
 * The `opentabs …` commands the product suggests must run from where the reader is. When
 * `opentabs` is not on PATH (no global install, no `npm link`), a suggested command is written
 * with the absolute command of this install: the single-file binary, or Node running the npm shim
 * cli/bin.mjs, or Bun with the flags that shim gives it. Used by the CLI for its own output and by
 * the server for error messages, which reach the user through REST, MCP and the CLI alike.
 */
import { realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { homeDir, resolveConfigDir } from './protocol/local-files.ts';

/** True inside the single-file executable built by `npm run compile`. */
export function isCompiled(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.dir.startsWith('/$bunfs') || import.meta.dir.includes('~BUN');
}


/**
 * Bun's flags for running opentabs in any folder, the same as cli/find-bun.mjs bunRunArgs() gives
 * the npm shim: Bun otherwise reads the bunfig.toml of the folder it runs in (a `preload` there
 * runs that folder's code first) and its .env files (OPENTABS_CONFIG_DIR, PATH …).
 */
export function bunRunArgs(): string[] {
  return ['--no-env-file', `--config=${join(import.meta.dir, '..', 'cli', 'bun-run.toml')}`];
}

/**
 * selfCommand for a process opentabs starts itself, or a client starts in its own folder (the
 * background server, the stdio bridge's autostart, a stdio client's config): with bunRunArgs, so
 * no bunfig.toml or .env of that folder is read. The single-file binary is built not to read them.
 */
export function selfSpawnCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, ...bunRunArgs(), join(import.meta.dir, '..', 'cli', 'main.ts')];
}

let printed: string[] | undefined;
/**
 * argv prefix printed for running `opentabs` when it is not on PATH. A printed command is run in
 * whatever folder the reader is in, so it must not let Bun read that folder's bunfig.toml or .env
 * (selfSpawnCommand's flags): Node running the npm shim cli/bin.mjs, which passes them, when Node
 * is installed (the shorter form), else Bun with them. The single-file binary reads neither.
 */
export function selfCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  printed ??= (() => {
    const node = nodeCommand();
    return node !== null && shimFindsBun() ? [node, join(import.meta.dir, '..', 'cli', 'bin.mjs')] : selfSpawnCommand();
  })();
  return [...printed];
}

/** True when `path` is Bun itself: `bun run` puts a `node` that is Bun on PATH where Node is missing. */
function isBun(path: string): boolean {
  try {
    const real = realpathSync(path);
    return real === realpathSync(process.execPath) || /^bunx?(\.exe)?$/i.test(basename(real));
  } catch {
    return true;
  }
}

let nodePath: string | null | undefined;
/**
 * The absolute path of a real Node, the one the user's shell finds first, else this process's;
 * null when there is none. Absolute, as Bun's path is in the other form: the command is pasted
 * where PATH may differ (another shell, a client's terminal).
 */
function nodeCommand(): string | null {
  if (nodePath !== undefined) return nodePath;
  for (const path of [userPath(), process.env.PATH ?? '']) {
    const found = Bun.which('node', { PATH: path });
    if (found !== null && !isBun(found)) return (nodePath = found);
  }
  return (nodePath = null);
}

/** True when cli/bin.mjs run by Node finds a Bun to run the CLI with (cli/find-bun.mjs). */
function shimFindsBun(): boolean {
  try {
    const { findBun } = require(join(import.meta.dir, '..', 'cli', 'find-bun.mjs')) as { findBun(): string };
    const bun = findBun();
    return bun !== 'bun' || Bun.which('bun', { PATH: userPath() }) !== null;
  } catch {
    return false;
  }
}

/** A word for a POSIX shell: quoted only when it needs to be. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * PATH as the user's shell has it: without the folders npm and Bun put in front of it for one run
 * (`npx opentabs`, `bunx opentabs`, `npm start`: a project's node_modules/.bin, npm's _npx cache),
 * where an `opentabs` found now is not found once that run is over.
 */
export function userPath(path = process.env.PATH ?? ''): string {
  const sep = process.platform === 'win32' ? ';' : ':';
  return path
    .split(sep)
    .filter((d) => !/[\\/]node_modules[\\/]\.bin[\\/]?$/.test(d) && !/[\\/]_npx[\\/]/.test(d) && !/[\\/]\.bunx-[^\\/]*[\\/]/.test(d))
    .join(sep);
}

let onPath: boolean | undefined;
/** True when `opentabs` is a command the user's shell finds (an npm global install or `npm link`). */
export function opentabsOnPath(): boolean {
  onPath ??= Bun.which('opentabs', { PATH: userPath() }) !== null;
  return onPath;
}

/** argv that runs `opentabs <args>` from anywhere: `opentabs` when it is on PATH, else the absolute command. */
export function runnableArgv(args: string[] = []): string[] {
  return opentabsOnPath() ? ['opentabs', ...args] : [...selfCommand(), ...args];
}

/**
 * `OPENTABS_CONFIG_DIR=<dir> ` when this process's config dir is not the default ~/.opentabs,
 * else ''. A suggested command carries it so that it reaches the same server from a shell where
 * the variable is not set (it may have been given for one command line only). POSIX shells only.
 */
export function configDirAssignment(): string {
  if (process.platform === 'win32') return '';
  const dir = resolveConfigDir();
  return dir === resolve(homeDir(), '.opentabs') ? '' : `OPENTABS_CONFIG_DIR=${shellWord(dir)} `;
}

/** True for `… --help` / `… -h`, which needs no config dir. */
function asksForHelp(args: string): boolean {
  return /(^|\s)(--help|-h)\s*$/.test(args);
}

/** runnableArgv as one line to paste into a shell (with the config dir when it is not the default). */
export function selfCommandText(args: string[] = []): string {
  const assign = asksForHelp(args.join(' ')) ? '' : configDirAssignment();
  return assign + runnableArgv(args).map(shellWord).join(' ');
}

/**
 * Rewrite every backticked `opentabs …` command in a message (also after &&, ||, | and ;) so it
 * runs as printed: the absolute command when `opentabs` is not on PATH, and OPENTABS_CONFIG_DIR
 * when the config dir is not the default (except for `--help`); unchanged otherwise.
 */
export function runnableCommands(text: string): string {
  if (!text.includes('`opentabs')) return text;
  const assign = configDirAssignment();
  if (!assign && opentabsOnPath()) return text;
  const self = runnableArgv().map(shellWord).join(' ');
  return text.replace(/`opentabs(?=[ `])[^`]*`/g, (quoted) =>
    quoted.replace(
      /(^`|&& |\|\| |\| |; )opentabs(?=[ `])(.*?)(?=\s*(?:&&|\|\||\||;)\s|`$)/g,
      (_m, before: string, rest: string) => `${before}${asksForHelp(rest) ? '' : assign}${self}${rest}`,
    ),
  );
}
