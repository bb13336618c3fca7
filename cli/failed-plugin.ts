/** What to run about a plugin that failed to load, for `plugin list` and `status`. */
import { runnableCommands } from './output.ts';
import { shellWord } from '../server/cli-command.ts';

/**
 * "build it: `opentabs plugin build <path>`, or remove it: `opentabs plugin remove <name>`", with
 * the folder named: the loader's own hint (`opentabs plugin build`) builds the current folder.
 */
export function failedPluginFix(f: { name?: string; path: string; error: string }): string {
  const target = shellWord(f.name ?? f.path);
  const build = /dist\/|tools\.json|adapter\.js|build/i.test(f.error) ? `build it: \`opentabs plugin build ${shellWord(f.path)}\`, or ` : '';
  return runnableCommands(`${build}remove it: \`opentabs plugin remove ${target}\``);
}
