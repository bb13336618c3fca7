/**
 * Where the server's source files are, also when it runs from its prebuilt start-up bundle
 * (cli/server-bundle.ts; the bundler writes `import.meta.dir` as the absolute source path, and the
 * bundle is used only in the folder it was built in).
 *
 * Two lazily loaded parts are always imported from source, never bundled: the extension installer
 * (it loads esbuild, which cannot be bundled) and the plugin drafter (authoring tooling, like the
 * SDK it points new projects at). `importFromSource` imports them by a path computed at run time,
 * which a bundler leaves alone.
 */
import { join } from 'node:path';
import { isCompiled } from './cli-command.ts';

const SERVER_DIR = import.meta.dir;

/** Import a module of the source tree, `relative` to server/ (e.g. `extension-install.ts`). */
export function importFromSource<T>(relative: string): Promise<T> {
  if (isCompiled()) {
    return Promise.reject(new Error(`${relative} is part of the OpenTabs package, which the single-file binary does not carry; run the server from the OpenTabs folder for this (after \`npm install\` there: \`node <OpenTabs folder>/cli/bin.mjs start\`, or \`npm link\` in that folder)`));
  }
  return import(join(SERVER_DIR, relative)) as Promise<T>;
}
