/**
 * Whether a file of this install changed after a server started: then that server still runs the
 * code it loaded (an update: `git pull`, `npm install`, a new binary). `start` and `doctor` say so.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isCompiled } from './self.ts';

const INSTALL_ROOT = resolve(import.meta.dir, '..');

/** A file of this install (the server and CLI sources, or the single-file binary) changed after `time`, else null. */
export function changedSince(time: number): string | null {
  if (isCompiled()) {
    try {
      return statSync(process.execPath).mtimeMs > time ? process.execPath : null;
    } catch {
      return null;
    }
  }
  // The start-up bundle's stamp lists every source file of the server and the start command.
  // Without one (never built), the files every version changes with.
  let inputs = ['package.json', 'cli/main.ts', 'cli/commands/start.ts', 'server/serve.ts'];
  try {
    inputs = Object.keys((JSON.parse(readFileSync(join(INSTALL_ROOT, 'server', 'serve.bundle.cjs.stamp.json'), 'utf8')) as { inputs?: Record<string, unknown> }).inputs ?? {});
  } catch {}
  for (const file of inputs) {
    try {
      if (statSync(join(INSTALL_ROOT, file)).mtimeMs > time) return join(INSTALL_ROOT, file);
    } catch {}
  }
  return null;
}
