/**
 * What to do about an import the build cannot resolve, for the bundler's error and the type
 * check's alike: a Node module does not exist in the page the adapter runs in; a package is
 * installed in the plugin folder. A relative path names its own mistake: no hint.
 */
import { builtinModules } from 'node:module';
import { shellWord } from '../../server/cli-command.ts';

export function missingModuleHint(spec: string, dir: string): string | undefined {
  if (!spec || spec.startsWith('.') || spec.startsWith('/')) return undefined;
  if (spec.startsWith('node:') || spec.startsWith('bun:') || builtinModules.includes(spec.split('/')[0]!)) {
    return `The adapter runs in the web page, where Node's modules ("${spec}") do not exist: use the page's fetch, or the SDK's fetchJson/postJson …, instead.`;
  }
  const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
  return `Install it in the plugin folder: \`cd ${shellWord(dir)} && npm install ${shellWord(pkg)}\` (the build looks in the plugin's node_modules, then in OpenTabs').`;
}
