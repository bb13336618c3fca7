/** Where OpenTabs keeps its state: `OPENTABS_CONFIG_DIR` or `~/.opentabs`. */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export { resolveConfigDir } from '../protocol/local-files.ts';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** The state dir and its `extension/` and `plugins/` children, private to the user (0700). */
export async function ensureStateDirs(dir: string): Promise<void> {
  for (const d of [dir, join(dir, 'extension'), join(dir, 'plugins')]) {
    try {
      // Synchronously: three folders, where each thread-pool round trip costs more than the call.
      mkdirSync(d, { recursive: true, mode: DIR_MODE });
      // mkdir's mode is masked by umask and ignored for existing dirs; make it exact.
      chmodSync(d, DIR_MODE);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : (err as Error).message;
      // The errno code stays on the error: the CLI prints such a refusal as one line, not a crash.
      throw Object.assign(new Error(`Cannot use ${d} as an OpenTabs state directory (${why}); set OPENTABS_CONFIG_DIR to a writable directory`), { code, path: d });
    }
  }
}
