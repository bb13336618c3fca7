/**
 * `opentabs plugin list|install|add|remove|configure|create|build`. State changes go to
 * config.json / the managed npm prefix, then a running server is told to reload (POST /reload);
 * settings go through POST /plugin-settings so the server validates them.
 */
import { realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { ensureStateDirs } from '../../server/state/paths.ts';
import { installPlugin, uninstallPlugin } from '../../server/plugins/offline.ts';
import { addLocalPlugin, removeLocalPlugin } from '../../server/plugins/local.ts';
import type { ConfigField, ConfigSchema } from '../../server/protocol/plugin-manifest.ts';
import type { LoadedPlugin } from '../../server/plugins/types.ts';
import { broadPatterns, fitPluginName, PLUGIN_NAME_RE, pluginNameFromPackage, reservedPluginName, resolveSettings } from '../../server/protocol/plugin-manifest.ts';
import type { BuildResult } from '../../plugins/tooling/index.ts';
import { parse } from '../args.ts';
import { runGroup, type Command } from '../command.ts';
import { CliError, c, err, out, plural, printJson, say, table, usageError } from '../output.ts';
import { findPlugin, scanPlugins } from '../plugin-lookup.ts';
import { isCompiled, selfCommandText } from '../self.ts';
import { configDirAssignment, shellWord } from '../../server/cli-command.ts';
import { fetchHealth, resolveTarget } from '../server-client.ts';
import { failedPluginFix } from '../failed-plugin.ts';
import { parseSettingPairs, readConfigSnapshot, reloadIfRunning, savePluginSettings } from '../settings.ts';

const HELP = `Usage: opentabs plugin <command> …

  opentabs plugin list [--json]                    Plugins (loaded, failed) with tools and tab state
  opentabs plugin install <spec>                   Install from npm (name, name@version, tarball path);
                                                   install scripts never run
  opentabs plugin add <path>                       Use a local plugin folder (built with \`plugin build\`)
      --allow-broad-patterns                       (install/add) accept a plugin that runs on every site
                                                   or every file (<all_urls>, *://*/*, file:///* …)
  opentabs plugin remove <name|path>               Uninstall an npm plugin or forget a local folder
  opentabs plugin configure <name> [key=value …]   Show or change a plugin's settings
  opentabs plugin create <name> [--dir D] [--url PATTERN]
                                                   Scaffold a new plugin project
      --from-capture FILE|tab:ID                   (create) draft its tools from recorded traffic
  opentabs plugin build [dir] [--watch] [--no-typecheck]
                                                   Type-check, then build dist/adapter.js + dist/tools.json

A running server reloads after install/add/remove. New plugins' tools start at 'ask'; a plugin
that runs on every site or file needs --allow-broad-patterns and its tools start 'off'.`;

export const command: Command = {
  name: 'plugin',
  summary: 'Plugins',
  help: HELP,
  run: (argv) => runGroup('plugin', HELP, { list, install, add, remove, configure, create, build }, argv),
};

const sub = (name: string, usage: string, body: string) => `Usage: opentabs plugin ${name} ${usage}\n\n${body}`;

async function list(argv: string[]): Promise<number> {
  const help = sub('list', '[--json] [--port N]', 'List plugins. With a running server: what it loaded (tools, tab state, tabs) and what failed;\notherwise: the plugin folders on disk and whether they load.');
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'plugin list');
  if (values.help) return (say(help), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'plugin list');
  const t = resolveTarget(values.port, 'plugin list');
  const health = await fetchHealth(t);
  if (health) {
    const plugins = health.pluginDetails ?? [];
    const failed = health.failedPlugins ?? [];
    if (values.json) {
      printJson({ running: true, plugins, failedPlugins: failed, discoveryErrors: health.discoveryErrors ?? [] });
      return 0;
    }
    if (plugins.length === 0 && failed.length === 0) {
      say('No plugins. Install one with `opentabs plugin install <name>` or add a folder with `opentabs plugin add <path>`.');
      return 0;
    }
    if (plugins.length) {
      out(
        table(
          plugins.map((p) => [p.name, p.version ?? '', p.displayName ?? '', plural(p.toolCount ?? p.tools?.length ?? 0, 'tool'), p.tabState ?? 'closed', plural((p.tabs ?? []).length, 'tab'), p.source ?? '']),
          ['NAME', 'VERSION', 'DISPLAY NAME', 'TOOLS', 'TAB STATE', 'TABS', 'SOURCE'],
        ),
      );
    }
    for (const f of failed) out(`${c.red('failed')} ${f.name ?? ''} ${f.path}: ${f.error}\n  ${c.dim(`→ ${failedPluginFix(f)}`)}`);
    for (const e of health.discoveryErrors ?? []) out(`${c.yellow('note')} ${e}`);
    return 0;
  }
  const scan = await scanPlugins(t.configDir);
  if (values.json) {
    printJson({
      running: false,
      plugins: scan.plugins.map((p) => ({ name: p.name, displayName: p.displayName, version: p.version, source: p.source, path: p.path, tools: p.tools.map((x) => x.fullName) })),
      failedPlugins: scan.failed,
      discoveryErrors: scan.discoveryErrors,
    });
    return 0;
  }
  err(c.dim('(server not running: showing plugin folders on disk)'));
  if (scan.plugins.length === 0 && scan.failed.length === 0) {
    say('No plugins. Install one with `opentabs plugin install <name>` or add a folder with `opentabs plugin add <path>`.');
    return 0;
  }
  if (scan.plugins.length) {
    out(table(scan.plugins.map((p) => [p.name, p.version, plural(p.tools.length, 'tool'), p.source, p.path]), ['NAME', 'VERSION', 'TOOLS', 'SOURCE', 'PATH']));
  }
  for (const f of scan.failed) out(`${c.red('failed')} ${f.name ?? ''} ${f.path}: ${f.error}\n  ${c.dim(`→ ${failedPluginFix(f)}`)}`);
  for (const e of scan.discoveryErrors) out(`${c.yellow('note')} ${e}`);
  return 0;
}

async function install(argv: string[]): Promise<number> {
  const help = sub(
    'install',
    '<spec> [--allow-broad-patterns] [--port N]',
    'Install a plugin package from the npm registry (or a tarball/folder path) into <config dir>/plugins\nwith install scripts disabled. Package names: opentabs-plugin-<name> or @scope/opentabs-plugin-<name>.\nProgress goes to stderr.\n\n' + BROAD_HELP,
  );
  const { values, positionals } = parse(argv, { port: { type: 'string' }, 'allow-broad-patterns': { type: 'boolean' } }, 'plugin install');
  if (values.help) return (say(help), 0);
  if (positionals.length !== 1) throw usageError('Expected exactly one package spec.', 'plugin install');
  const t = resolveTarget(values.port, 'plugin install');
  await ensureStateDirs(t.configDir);
  // A local tarball/folder path must be absolute for npm running in the prefix dir.
  const raw = positionals[0];
  const spec = /^(\.{1,2}\/|\/|~)/.test(raw) || raw.endsWith('.tgz') ? resolve(raw) : raw;
  // What was installed before, to say what an update changed.
  const before = (await scanPlugins(t.configDir)).plugins.filter((p) => p.source === 'npm');
  let r;
  try {
    r = await installPlugin(t.configDir, spec, (line) => err(c.dim(line)), { allowBroadPatterns: values['allow-broad-patterns'] === true, quietResult: true });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const reloaded = await reloadIfRunning(t);
  const afterScan = await scanPlugins(t.configDir);
  const now = afterScan.plugins.find((p) => p.name === r.name && p.source === 'npm' && p.packageName === r.packageName);
  const previous = before.find((p) => p.packageName === r.packageName);
  // A local folder of the same plugin name is loaded instead (discovery takes local folders first).
  const shadow = afterScan.plugins.find((p) => p.name === r.name && p.source === 'local');
  const changes = () => {
    if (previous && now) say(updateNote(previous, now));
    if (now) {
      const missing = missingRequiredSettings(now.configSchema, readConfigSnapshot(t.configDir).pluginSettings[r.name]);
      for (const [key, field] of missing) {
        const choices = field.type === 'select' && field.options?.length ? ` (one of ${field.options.join(', ')})` : field.type === 'boolean' ? ' (true or false)' : '';
        say(`Setting "${key}"${choices} is required and not set: its tools refuse to run (setting_required) until you set it in the side panel or with \`opentabs plugin configure ${r.name} ${key}=${settingExample(field)}\`.`);
      }
    }
  };
  const loaded = !reloaded ? '' : shadow ? " The running server keeps the local folder's plugin." : ' The running server loaded it.';
  const shadowNote = () => {
    if (shadow) {
      say(
        `note: the local folder ${shadow.path} also provides plugin "${r.name}" and is used instead: a local folder wins over an installed package. ` +
          `To use the installed package: \`opentabs plugin remove ${shadow.path}\` (the folder itself is left alone).`,
      );
    }
  };
  if (r.broadPatterns) {
    say(`Installed ${r.packageName} → plugin "${r.name}" (${plural(r.tools, 'tool')}). ${broadNote(r.name, r.broadPatterns)}${loaded}`);
    changes();
    shadowNote();
    return 0;
  }
  // New plugins start at 'ask'; one installed again keeps the permission it had.
  const permission = readConfigSnapshot(t.configDir).permissions[r.name]?.default ?? 'ask';
  const how = permission === 'ask' ? `: each call waits for approval in the side panel, or \`opentabs config set permission.${r.name} auto\`` : '';
  say(`Installed ${r.packageName} → plugin "${r.name}" (${plural(r.tools, 'tool')}; permission ${permission}${how}).${loaded}`);
  changes();
  shadowNote();
  return 0;
}

/**
 * What installing over an installed package changed: its version and its tools. Permissions and
 * settings are kept by plugin and tool name, so a tool that keeps its name keeps its permission.
 */
function updateNote(previous: LoadedPlugin, now: LoadedPlugin): string {
  const version = previous.version === now.version ? `Installed version ${now.version} again` : `Updated from ${previous.version} to ${now.version}`;
  const oldTools = new Map(previous.tools.map((x) => [x.name, x]));
  const newTools = new Map(now.tools.map((x) => [x.name, x]));
  const added = now.tools.filter((x) => !oldTools.has(x.name)).map((x) => x.fullName);
  const removed = previous.tools.filter((x) => !newTools.has(x.name)).map((x) => x.fullName);
  const changed = now.tools.filter((x) => oldTools.has(x.name) && JSON.stringify(oldTools.get(x.name)!.inputSchema) !== JSON.stringify(x.inputSchema)).map((x) => x.fullName);
  const parts = [
    added.length ? `new: ${added.join(', ')}` : '',
    removed.length ? `gone: ${removed.join(', ')}` : '',
    changed.length ? `input changed: ${changed.join(', ')}` : '',
  ].filter(Boolean);
  return `${version}${parts.length ? ` (${parts.join('; ')})` : ''}; permissions and settings are kept.`;
}

/** Required settings with no default and no saved value. */
function missingRequiredSettings(schema: ConfigSchema | undefined, saved: Record<string, unknown> | undefined): [string, ConfigField][] {
  return Object.entries(schema ?? {}).filter(([key, f]) => f.required === true && f.default === undefined && (saved?.[key] === undefined || saved[key] === null));
}

/** A value that runs as printed in a shell: a select's first choice, `true`, else a quoted placeholder. */
function settingExample(field: ConfigField): string {
  if (field.type === 'select' && field.options?.length) return /^[\w.:/@-]+$/.test(field.options[0]!) ? field.options[0]! : `'${field.options[0]!.replace(/'/g, `'\\''`)}'`;
  if (field.type === 'boolean') return 'true';
  return `'<${field.type === 'url' ? 'https://…' : field.type}>'`;
}

async function add(argv: string[]): Promise<number> {
  const help = sub('add', '<path> [--allow-broad-patterns] [--port N]', 'Add a local plugin folder (package.json + dist/ from `opentabs plugin build`) to config.json.\nWith `opentabs start --dev` it hot-reloads on every rebuild.\n\n' + BROAD_HELP);
  const { values, positionals } = parse(argv, { port: { type: 'string' }, 'allow-broad-patterns': { type: 'boolean' } }, 'plugin add');
  if (values.help) return (say(help), 0);
  if (positionals.length !== 1) throw usageError('Expected exactly one folder path.', 'plugin add');
  const t = resolveTarget(values.port, 'plugin add');
  await ensureStateDirs(t.configDir);
  let r;
  try {
    r = await addLocalPlugin(t.configDir, positionals[0], { allowBroadPatterns: values['allow-broad-patterns'] === true });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const reloaded = await reloadIfRunning(t);
  if (r.warning) {
    err(`warning: ${r.path} does not load yet: ${r.warning}`);
    say(`Added ${r.path}${r.name ? ` (plugin "${r.name}")` : ''}; build it with \`opentabs plugin build ${r.path}\`.`);
    return 0;
  }
  if (r.broadPatterns) {
    say(`Added plugin "${r.name}" from ${r.path}. ${broadNote(r.name ?? '', r.broadPatterns)}${reloaded ? ' The running server loaded it.' : ''}`);
    return 0;
  }
  out(`Added plugin "${r.name}" from ${r.path}.${reloaded ? ' The running server loaded it.' : ''}`);
  return 0;
}

const BROAD_HELP =
  'A plugin whose URL patterns match every site or every local file (<all_urls>, *://*/*, http://*/*,\n' +
  'https://*/*, file:///*, *.com …) would run its code in all those pages: it is refused unless you\n' +
  'pass --allow-broad-patterns, and then its tools start off until you turn them on.';

function broadNote(name: string, patterns: string[]): string {
  return `${c.yellow('It runs on every site or file')} (${patterns.join(', ')}), so all its tools start off: turn the ones you need on in the side panel or with \`opentabs config set permission.${name} ask\`.`;
}

async function remove(argv: string[]): Promise<number> {
  const help = sub('remove', '<name|path> [--port N]', 'Remove a plugin by name (or npm package name): npm-installed packages are uninstalled, local\nfolders are removed from config.json (the folder itself is left alone).\nGiven the path of a local folder: only that folder.');
  const { values, positionals } = parse(argv, { port: { type: 'string' } }, 'plugin remove');
  if (values.help) return (say(help), 0);
  if (positionals.length !== 1) throw usageError('Expected exactly one plugin name.', 'plugin remove');
  const t = resolveTarget(values.port, 'plugin remove');
  const name = pluginNameFromPackage(positionals[0]) ?? positionals[0];
  const scan = await scanPlugins(t.configDir);
  const local = readConfigSnapshot(t.configDir).localPlugins.map((p) => resolve(t.configDir, p));
  // Local folders by plugin name (loaded or failed with a known name) or by path.
  const localMatches = local.filter(
    (path) => path === resolve(positionals[0]) || scan.plugins.some((p) => p.path === path && p.name === name) || scan.failed.some((f) => f.path === path && f.name === name),
  );
  // Removed by path: the message names the plugin that folder held, not the path.
  const byPath = localMatches.find((path) => path === resolve(positionals[0]!));
  const shownName = (byPath && [...scan.plugins, ...scan.failed].find((p) => p.path === byPath)?.name) || name;
  const removed: string[] = [];
  for (const path of localMatches) removed.push(`local folder ${await removeLocalPlugin(t.configDir, path)}`);
  try {
    const pkgs = await uninstallPlugin(t.configDir, positionals[0]);
    removed.push(...pkgs.map((p) => `npm package ${p}`));
  } catch (e) {
    if (removed.length === 0) {
      const known = [...scan.plugins.map((p) => p.name), ...scan.failed.map((f) => f.name).filter(Boolean)];
      // A path (a "/", and not a scoped package name): say which folders are added.
      if (positionals[0]!.includes('/') && !positionals[0]!.startsWith('@')) {
        throw new CliError(
          `No local plugin folder ${resolve(positionals[0]!)} is added.${local.length ? ` Added folders: ${local.join(', ')}.` : ' No folder is added.'}${known.length ? ` Plugins by name: ${known.join(', ')}.` : ''} See \`opentabs plugin list\`.`,
        );
      }
      throw new CliError(`No plugin named "${positionals[0]}" is installed or added.${known.length ? ` Known: ${known.join(', ')}.` : ''} See \`opentabs plugin list\`.`);
    }
    if ((e as { code?: string }).code !== 'unknown_plugin') throw new CliError((e as Error).message);
  }
  const reloaded = await reloadIfRunning(t);
  // Removing a local folder leaves an installed package of the same name, which is loaded now.
  const left = (await scanPlugins(t.configDir)).plugins.find((p) => p.name === shownName);
  if (left) {
    out(`Removed plugin "${shownName}" (${removed.join(', ')}). Plugin "${shownName}" is now the ${left.source === 'npm' ? 'installed package' : 'local folder'} at ${left.path}${reloaded ? ', which the running server loaded' : ''}.`);
    return 0;
  }
  out(`Removed plugin "${shownName}" (${removed.join(', ')}).${reloaded ? ' The running server unloaded it.' : ''}`);
  return 0;
}

async function configure(argv: string[]): Promise<number> {
  const help = sub(
    'configure',
    '<name> [key=value …] [--json] [--port N]',
    "Without key=value: print the plugin's settings (current value, type, default, description).\nWith key=value pairs: change them. Values are typed per the plugin's configSchema (number,\nboolean true/false, select options, url, string); an empty value (key=) clears a setting.\nA running server validates and applies them at once (POST /plugin-settings).",
  );
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'plugin configure');
  if (values.help) return (say(help), 0);
  const [name, ...pairs] = positionals;
  if (!name) throw usageError('Missing plugin name.', 'plugin configure');
  const t = resolveTarget(values.port, 'plugin configure');
  if (pairs.length > 0) {
    const settings = await parseSettingPairs(t.configDir, name, pairs);
    const via = await savePluginSettings(t, name, settings);
    out(`Saved settings for ${name}: ${Object.entries(settings).map(([k, v]) => `${k}=${v === null ? '(default)' : JSON.stringify(v)}`).join(', ')}${via === 'server' ? ' (applied by the running server)' : ''}.`);
    return 0;
  }
  const plugin = await findPlugin(t.configDir, name);
  const saved = readConfigSnapshot(t.configDir).pluginSettings[name] ?? {};
  const resolved = resolveSettings(plugin.configSchema, saved);
  const schema = plugin.configSchema ?? {};
  if (values.json) {
    printJson({ plugin: name, settings: resolved, saved, configSchema: schema });
    return 0;
  }
  if (Object.keys(schema).length === 0) {
    out(`Plugin "${name}" has no settings.`);
    return 0;
  }
  out(
    table(
      Object.entries(schema).map(([key, f]) => [
        key,
        key in resolved ? JSON.stringify(resolved[key]) : c.dim(f.required ? '(required, not set)' : '(not set)'),
        f.type + (f.options ? ` (${f.options.join('|')})` : '') + (f.required ? ', required' : ''),
        f.default !== undefined ? `default ${JSON.stringify(f.default)}` : '',
        f.description ?? f.label ?? '',
      ]),
      ['SETTING', 'VALUE', 'TYPE', 'DEFAULT', 'DESCRIPTION'],
    ),
  );
  // An example that runs as printed: a required setting not set yet (its first choice), else the
  // first setting with its current value; `key=` puts one back to its default.
  const [key, field] = Object.entries(schema).find(([k, f]) => f.required && !(k in resolved)) ?? Object.entries(schema)[0]!;
  const value = key in resolved ? (typeof resolved[key] === 'string' ? (resolved[key] as string) : JSON.stringify(resolved[key])) : null;
  const example = value === null ? `${key}=${settingExample(field)}` : shellWord(`${key}=${value}`);
  say(c.dim(`Change with: \`opentabs plugin configure ${name} ${example}\` (any number of setting=value; \`${key}=\` puts a setting back to its default)`));
  return 0;
}

/**
 * Plugin authoring bundles with esbuild and points new projects at the SDK sources on disk; the
 * single-file binary carries neither, so say so instead of failing half-way (or scaffolding a
 * project whose tsconfig points into the binary's virtual file system).
 */
function requireAuthoringTools(command: string): void {
  if (isCompiled()) {
    throw new CliError(
      `\`opentabs ${command}\` needs the OpenTabs package (the SDK and esbuild), which the single-file binary does not carry. ` +
        // Not backticked as `opentabs …`: that would be rewritten into this binary's own path.
        `Run it from the OpenTabs folder (this repository, after \`npm install\`): \`node <OpenTabs folder>/cli/bin.mjs ${command} …\`, ` +
        `or \`npm link\` in that folder, which makes it the opentabs command on your PATH.`,
    );
  }
}

async function create(argv: string[]): Promise<number> {
  const help = sub(
    'create',
    '<name> [--dir D] [--url PATTERN] [--from-capture FILE|tab:ID|--tab ID] [--port N]',
    'Scaffold a plugin project opentabs-plugin-<name> in D (default ./opentabs-plugin-<name>) that builds\nand passes its own test out of the box. --url sets the app\'s Chrome match pattern\n(default https://example.com/*), e.g. --url "https://app.example.com/*".\n' +
      '--from-capture drafts the tools from recorded traffic instead: a file (browser_get_network_requests\nresult or HAR) or tab:ID (or --tab ID), the capture running in that tab (browser_enable_network_capture with\ncaptureBodies, then use the app; --port N: the server that tab\'s capture runs in). Secrets in the\ntraffic are never written.',
  );
  // `--from-capture --tab <id>` is the same source as `--from-capture tab:<id>`.
  const i = argv.indexOf('--from-capture');
  if (i >= 0 && argv[i + 1] === '--tab' && argv[i + 2] !== undefined) argv = [...argv.slice(0, i), '--from-capture', `tab:${argv[i + 2]}`, ...argv.slice(i + 3)];
  const { values, positionals } = parse(argv, { dir: { type: 'string' }, url: { type: 'string' }, 'from-capture': { type: 'string' }, port: { type: 'string' } }, 'plugin create');
  if (values.help) return (say(help), 0);
  if (positionals.length !== 1) throw usageError('Expected exactly one plugin name.', 'plugin create');
  const name = positionals[0]!;
  // A name no plugin can have is a usage error (exit 2), refused before anything is read or written.
  if (!PLUGIN_NAME_RE.test(name)) {
    // "My App", "my_app", "MyApp" → "my-app": said when that fits.
    const fit = fitPluginName(name);
    const hint = fit !== null && fit !== name ? ` Did you mean "${fit}"?` : '';
    throw usageError(`${JSON.stringify(name)} is not a valid plugin name (lowercase letters and digits, words joined by "-", e.g. "my-app").${hint}`, 'plugin create');
  }
  const reserved = reservedPluginName(name);
  if (reserved) throw usageError(`${reserved}.`, 'plugin create');
  requireAuthoringTools('plugin create');
  const dir = resolve(values.dir ?? `opentabs-plugin-${name}`);
  if (values['from-capture'] !== undefined) {
    const { draftFromCapture } = await import('./plugin-draft.ts');
    return draftFromCapture(name, dir, values['from-capture'], values.port);
  }
  const { createPlugin } = await import('../../plugins/tooling/index.ts');
  let r;
  try {
    r = await createPlugin(name, dir, { urlPattern: values.url });
  } catch (e) {
    const message = (e as Error).message;
    // A --url that is not a match pattern is a bad flag value: a usage error too.
    if (message.startsWith('url: ')) throw usageError(message, 'plugin create');
    throw new CliError(message);
  }
  out(`Created plugin "${name}" (${r.packageName}) in ${r.dir}.`);
  // A pattern on every site or file: `plugin add` takes it only with --allow-broad-patterns.
  const broad = values.url !== undefined && broadPatterns([values.url]).length > 0;
  const next = withConfigDir(r.next);
  out(`Next: ${broad ? next.replace(/npm run add$/, 'npm run add -- --allow-broad-patterns') : next}`);
  if (broad) {
    say(
      `note: ${values.url} matches every site or file, so the plugin's code would run in all those pages: ` +
        `\`opentabs plugin add\` takes it only with --allow-broad-patterns, and its tools then start off ` +
        `(\`opentabs config set permission.${name} ask\` turns them on). A pattern for the app's own site avoids both.`,
    );
  }
  return 0;
}

/**
 * The scaffold's "cd … && npm run build && npm test && npm run add" with OPENTABS_CONFIG_DIR on the
 * steps that reach a server (the build's reload, add's config.json) when the config dir is not the
 * default: run in a shell without the variable, they would otherwise use ~/.opentabs.
 */
export function withConfigDir(next: string): string {
  const assign = configDirAssignment();
  return assign ? next.replace(/&& npm run build\b/, `&& ${assign}npm run build`).replace(/&& npm run add$/, `&& ${assign}npm run add`) : next;
}

async function build(argv: string[]): Promise<number> {
  const help = sub(
    'build',
    '[dir] [--watch] [--no-typecheck]',
    'Build the plugin in dir (default .): dist/adapter.js (IIFE) and dist/tools.json. Bad manifests\nare rejected naming the field. A running server reloads after each build. --watch rebuilds on change.\n' +
      'First type-checks the project with its tsconfig.json (TypeScript from the plugin or from OpenTabs)\nand stops on type errors; --no-typecheck skips that. --watch loads each rebuild at once, then\ntype-checks it and prints the errors as a warning.',
  );
  const { values, positionals } = parse(argv, { watch: { type: 'boolean' }, 'no-typecheck': { type: 'boolean' } }, 'plugin build');
  if (values.help) return (say(help), 0);
  if (positionals.length > 1) throw usageError('Expected at most one folder.', 'plugin build');
  requireAuthoringTools('plugin build');
  const dir = resolve(positionals[0] ?? '.');
  const { buildPlugin } = await import('../../plugins/tooling/index.ts');
  // The first build's summary (stdout) says what its own "Built …", "Reloaded …" and warning lines
  // say: those are left out until it is printed, then each rebuild's lines show.
  let summarised = false;
  const log = (line: string) => {
    if (!summarised && (line.startsWith('Built ') || line === 'Reloaded the running OpenTabs server' || (line.startsWith('warning: ') && !line.startsWith('warning: Type check')))) return;
    err(c.dim(line));
  };
  try {
    if (values.watch) {
      const handle = await buildPlugin(dir, { watch: true, log, typecheck: !values['no-typecheck'], keepWatching: true });
      out(describeBuild(dir, handle.first));
      summarised = true;
      out(`Watching ${dir} for changes (Ctrl-C to stop) …`);
      const stop = () => void handle.stop().finally(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return -1;
    }
    out(describeBuild(dir, await buildPlugin(dir, { log, typecheck: !values['no-typecheck'] })));
  } catch (e) {
    const message = (e as Error).message;
    if (message.startsWith('Type check failed')) {
      throw new CliError(`${message}\nFix them, or build without the check: \`${selfCommandText(['plugin', 'build', dir, '--no-typecheck'])}\``);
    }
    throw new CliError(message);
  }
  return 0;
}

function describeBuild(dir: string, r: BuildResult): string {
  const warnings = r.warnings.map((w) => `\nwarning: ${w}`).join('');
  const head = `Built plugin "${r.name}" in ${dir} (${plural(r.tools.length, 'tool')}, adapter ${r.adapterBytes} bytes)`;
  // A folder not yet in config.json is not loaded by any server, reloaded or not: say how to add it.
  if (!isAddedFolder(dir)) {
    return `${head}. OpenTabs does not load it yet: add the folder once with \`${selfCommandText(['plugin', 'add', dir])}\` (\`npm run add\` in a scaffolded plugin).${warnings}`;
  }
  return `${head}${r.reloaded ? '; the running server reloaded it' : ''}.${warnings}`;
}

/** Whether config.json lists this folder as a local plugin, or it lies in the config dir's own plugins/. */
function isAddedFolder(dir: string): boolean {
  const t = resolveTarget(undefined, 'plugin build');
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const here = real(dir);
  if (readConfigSnapshot(t.configDir).localPlugins.some((p) => real(resolve(t.configDir, p)) === here)) return true;
  const installed = real(join(t.configDir, 'plugins'));
  return here.startsWith(installed + sep);
}
