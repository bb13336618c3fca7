/**
 * `opentabs plugin build` type-checks the plugin before bundling: esbuild strips types without
 * checking them, so a wrong field name or a handler returning the wrong shape would otherwise
 * build fine and fail only when an agent calls the tool. Runs the project's own tsconfig.json with
 * TypeScript from the plugin's node_modules, else from this package's.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_NODE_MODULES } from './paths.ts';
import { missingModuleHint } from './module-hints.ts';

/** A type check is bounded: a hung compiler must not hang the build. */
export const TYPECHECK_TIMEOUT_MS = 120_000;
/** How many compiler errors the build failure shows (the rest are counted). */
const ERRORS_SHOWN = 20;

export type TypecheckResult = { ran: true; errors: string[] } | { ran: false; why: string };

function findTsc(dir: string): string | null {
  for (const base of [join(dir, 'node_modules'), ROOT_NODE_MODULES]) {
    const tsc = join(base, 'typescript', 'bin', 'tsc');
    if (existsSync(tsc)) return tsc;
  }
  return null;
}

/**
 * Run `tsc --noEmit -p <dir>`; errors are tsc's own lines (file(line,col): error TSxxxx: …).
 * `signal` ends the compiler at once (a watch being stopped): the result is then `ran: false`.
 */
export async function typecheckPlugin(dir: string, signal?: AbortSignal): Promise<TypecheckResult> {
  if (signal?.aborted) return { ran: false, why: 'stopped' };
  if (!existsSync(join(dir, 'tsconfig.json'))) return { ran: false, why: 'no tsconfig.json in the plugin folder' };
  const tsc = findTsc(dir);
  if (!tsc) return { ran: false, why: 'TypeScript is not installed (npm install --save-dev typescript)' };
  const proc = Bun.spawn([process.execPath, tsc, '--noEmit', '--pretty', 'false', '-p', dir], {
    cwd: dir,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill(), TYPECHECK_TIMEOUT_MS);
  const abort = () => proc.kill();
  signal?.addEventListener('abort', abort, { once: true });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  signal?.removeEventListener('abort', abort);
  if (signal?.aborted) return { ran: false, why: 'stopped' };
  if (code === 0) return { ran: true, errors: [] };
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trimEnd()).filter(Boolean);
  // An error's indented lines that follow it are its explanation (e.g. "Property 'urlPatterns' is
  // missing …"): kept with it, one entry per error.
  const errors: string[] = [];
  for (const l of lines) {
    if (/error TS\d+:/.test(l)) errors.push(l);
    else if (/^\s/.test(l) && errors.length > 0) errors[errors.length - 1] += `\n${l}`;
  }
  if (proc.signalCode) return { ran: true, errors: [`the type check did not finish within ${TYPECHECK_TIMEOUT_MS / 1000} s`] };
  return { ran: true, errors: errors.length > 0 ? errors : lines.length > 0 ? lines : [`tsc exited with code ${code}`] };
}

/** The build failure's message: the first errors, paths relative to the plugin folder. */
export function describeTypeErrors(dir: string, errors: string[]): string {
  const shown = errors.slice(0, ERRORS_SHOWN).map((e) => {
    const text = `  ${(e.startsWith(dir + '/') ? e.slice(dir.length + 1) : e).split('\n').join('\n  ')}`;
    // "Cannot find module 'x'": a package to install in the plugin folder, or a Node module the page lacks.
    const spec = /error TS(?:2307|2792): Cannot find module '([^']+)'/.exec(e)?.[1];
    const hint = spec === undefined ? undefined : missingModuleHint(spec, dir);
    return hint ? `${text}\n    ${hint}` : text;
  });
  const more = errors.length > ERRORS_SHOWN ? `\n  … and ${errors.length - ERRORS_SHOWN} more` : '';
  return `Type check failed (${errors.length} error${errors.length === 1 ? '' : 's'}):\n${shown.join('\n')}${more}`;
}
