/** `bun plugins/tooling/cli-build.ts [dir] [--watch]`: build without the opentabs CLI (used by plugins' npm scripts). */
import { buildPlugin, PluginBuildError } from './build.ts';

const args = process.argv.slice(2);
const watch = args.includes('--watch');
const dir = args.find((a) => !a.startsWith('--')) ?? '.';
try {
  if (watch) {
    await buildPlugin(dir, { watch: true });
    console.log('Watching for changes (Ctrl-C to stop) …');
  } else await buildPlugin(dir);
} catch (err) {
  console.error(err instanceof PluginBuildError ? `Build failed: ${err.message}` : err);
  process.exit(1);
}
