/** How to run this CLI again as a child process (background server, `mcp` auto-start). */
import { join } from 'node:path';

/** True inside the single-file executable built by `npm run compile`. */
export function isCompiled(): boolean {
  return import.meta.url.includes('$bunfs') || import.meta.dir.startsWith('/$bunfs') || import.meta.dir.includes('~BUN');
}

/** argv prefix that runs `opentabs` (the binary itself, or Bun + cli/main.ts). */
export function selfCommand(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, join(import.meta.dir, 'main.ts')];
}

/** A word for a POSIX shell: quoted only when it needs to be. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** True when `opentabs` is a command the user's shell finds (an npm global install or `npm link`). */
export function opentabsOnPath(): boolean {
  onPath ??= Bun.which('opentabs') !== null;
  return onPath;
}
let onPath: boolean | undefined;

/**
 * argv that runs `opentabs <args>` from anywhere: `opentabs` when it is on PATH, else the absolute
 * paths this CLI runs from (the compiled binary, or Bun + cli/main.ts).
 */
export function runnableArgv(args: string[] = []): string[] {
  return opentabsOnPath() ? ['opentabs', ...args] : [...selfCommand(), ...args];
}

/** runnableArgv as one line to paste into a shell. */
export function selfCommandText(args: string[] = []): string {
  return runnableArgv(args).map(shellWord).join(' ');
}
