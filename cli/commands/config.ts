/** `opentabs config show|set|secret|client-token|rotate-secret`. */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { configPath, isPermission, isSessionsPerMinute, normalizeOrigin } from '../../server/state/config.ts';
import { MCP_SESSION_RATE_LIMIT, MCP_SESSIONS_PER_MINUTE_MAX } from '../../server/limits.ts';
import { PAGE_TOOL_PREFIX_RE, PLUGIN_NAME_RE } from '../../server/protocol/plugin-manifest.ts';
import { BROWSER_TOOL_NAMES } from '../../server/tools/browser-catalog.ts';
import { closeToolNames } from '../../server/tools/suggest.ts';
import { clientTokenPath, readClientTokenSync, readSecretSync, rotateSecret, secretPath } from '../../server/state/secret.ts';
import { parse, parseBool } from '../args.ts';
import { runGroup, type Command } from '../command.ts';
import { CliError, c, err, out, printJson, runnableCommands, say, usageError } from '../output.ts';
import { shellWord } from '../../server/cli-command.ts';
import { configDir, probePort, resolveTarget } from '../server-client.ts';
import { clientConfigsHolding } from '../client-config-scan.ts';
import { openConfigForWrite, parseSettingPairs, readConfigSnapshot, reloadIfRunning, savePluginSettings } from '../settings.ts';

const HELP = `Usage: opentabs config <show|set|secret|client-token|rotate-secret> …

  opentabs config show [--json] [--show-secret]   Config dir, port, secret, permissions, settings
  opentabs config set <key> <value>               Change one setting (see \`opentabs config set --help\`)
  opentabs config secret                          Print the secret alone (yours and the CLI's, for scripts)
  opentabs config client-token                    Print the client token alone (what MCP clients get)
  opentabs config rotate-secret                   Replace the secret and the client token (running server picks them up)`;

const SHOW_HELP = `Usage: opentabs config show [--json] [--show-secret] [--port N]

Show the config dir, the server URL/port and whether it runs, the secret (hidden unless
--show-secret), skipPermissions, allowFileUrls, uploadFolders, mcpSessionsPerMinute, local plugins,
permissions, page origins and plugin settings.

  --json          Machine-readable: {configDir, configFile, port, url, running, secret?, secretFile,
                  clientTokenFile, …config.json}
  --show-secret   Include the secret (\`opentabs config secret\` prints it alone)`;

const SECRET_HELP = `Usage: opentabs config secret

Print the secret of this config dir (<config dir>/extension/auth.json) and nothing else. It is
yours and the CLI's: it also answers approvals, changes settings and opens the extension's
connection. MCP clients get the client token instead (\`opentabs config client-token\`, or
\`opentabs setup <client>\`, which writes it).
Exits 1 when no secret has been created yet (\`opentabs start\` creates it).`;

const CLIENT_TOKEN_HELP = `Usage: opentabs config client-token

Print the client token of this config dir (<config dir>/client-token.json) and nothing else: what
MCP clients send (\`Authorization: Bearer <token>\`), e.g.
  export OPENTABS_SECRET="$(opentabs config client-token)"   (for Codex's --bearer-token-env-var)
It reaches MCP, tool calls and the read-only endpoints, not approvals, settings or the extension's
connection. Exits 1 when no token has been created yet (\`opentabs start\` creates it).`;

const SET_HELP = `Usage: opentabs config set <key> <value> [--port N]

Keys:
  permission.<plugin> off|ask|auto           Default permission for every tool of a plugin (an
                                             installed or added one: add the plugin first)
  permission.<plugin>.<tool> off|ask|auto    One tool (short name like send_message, or the full name;
                                             permission.<plugin>_<tool> works too)
  permission.<browser_tool> off|ask|auto     A built-in tool, e.g. permission.browser_execute_script auto
  skipPermissions true|false                 Treat every 'ask' tool as 'auto' ('off' stays off)
  allowFileUrls true|false                   Let built-in tools open and read file:// pages (never
                                             the OpenTabs config folder); off by default
  plugin.<name>.<setting> <value>            A plugin setting, typed per its configSchema ("" clears it)
  pageOrigin.<origin> off|ask|auto           Page tools (WebMCP) of one site, e.g.
                                             pageOrigin.https://app.example.com auto (new origins: ask)
  mcpSessionsPerMinute <n>                   New MCP sessions allowed per minute (default 5)
  uploadFolders <folder>[,<folder>…]         Folders browser_upload_file may take files from
                                             (absolute paths or ~/…; "" allows none, the default)

config.json is written atomically; a running server reloads it at once (--port N: the port it
runs on, when it is not this config dir's last one).`;

const ROTATE_HELP = `Usage: opentabs config rotate-secret [--port N]

Write a new secret to <config dir>/extension/auth.json and a new client token to
<config dir>/client-token.json, then tell a running server to reload (authenticated with the old
secret). The extension reconnects with the new secret by itself; MCP clients need the new token:
run \`opentabs setup <client>\` again for each.`;

export const command: Command = {
  name: 'config',
  summary: 'Configuration',
  help: HELP,
  run: (argv) => runGroup('config', HELP, { show, set, secret: printSecret, 'client-token': printClientToken, 'rotate-secret': rotate }, argv),
};

async function printSecret(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {}, 'config secret');
  if (values.help) return (say(SECRET_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'config secret');
  const dir = configDir();
  const secret = readSecretSync(dir);
  if (secret === null) throw new CliError(runnableCommands(`No secret in ${secretPath(dir)} yet: run \`opentabs start\` to create one.`));
  out(secret);
  return 0;
}

async function printClientToken(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {}, 'config client-token');
  if (values.help) return (say(CLIENT_TOKEN_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'config client-token');
  const dir = configDir();
  const token = readClientTokenSync(dir);
  if (token === null) throw new CliError(runnableCommands(`No client token in ${clientTokenPath(dir)} yet: run \`opentabs start\` to create one.`));
  out(token);
  return 0;
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, 'show-secret': { type: 'boolean' }, port: { type: 'string' } }, 'config show');
  if (values.help) return (say(SHOW_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'config show');
  const t = resolveTarget(values.port, 'config show');
  const secret = readSecretSync(t.configDir);
  const cfg = readConfigSnapshot(t.configDir);
  const running = (await probePort(t.port)).kind === 'opentabs';
  if (values.json) {
    printJson({
      ...(values['show-secret'] ? { secret } : {}),
      port: t.port,
      url: t.url,
      running,
      configDir: t.configDir,
      configFile: configPath(t.configDir),
      secretFile: secretPath(t.configDir),
      clientTokenFile: clientTokenPath(t.configDir),
      extensionDir: join(t.configDir, 'extension'),
      secretSet: secret !== null,
      ...cfg,
    });
    return 0;
  }
  const secretText = secret === null ? c.yellow(runnableCommands('not created yet (run `opentabs start`)')) : values['show-secret'] ? secret : c.dim(`${secret.slice(0, 4)}… (use --show-secret)`);
  out(`${c.bold('Config dir')}       ${t.configDir}`);
  out(`${c.bold('Config file')}      ${configPath(t.configDir)}`);
  out(`${c.bold('Server')}           ${t.url} — ${running ? c.green('running') : 'not running'}`);
  out(`${c.bold('Secret')}           ${secretText}`);
  out(`${c.bold('Client token')}     ${clientTokenPath(t.configDir)} ${c.dim(runnableCommands('(what MCP clients get: `opentabs config client-token`)'))}`);
  out(`${c.bold('Extension folder')} ${join(t.configDir, 'extension')}`);
  out(`${c.bold('skipPermissions')}  ${cfg.skipPermissions === true}`);
  out(`${c.bold('allowFileUrls')}    ${cfg.allowFileUrls === true}`);
  out(`${c.bold('uploadFolders')}    ${cfg.uploadFolders?.length ? cfg.uploadFolders.join(', ') : c.dim('none (uploads refused)')}`);
  out(`${c.bold('MCP sessions')}     ${cfg.mcpSessionsPerMinute ?? c.dim(`${MCP_SESSION_RATE_LIMIT.max} (default)`)} new per minute (mcpSessionsPerMinute)`);
  out(`${c.bold('Local plugins')}    ${cfg.localPlugins.length ? cfg.localPlugins.join(', ') : c.dim('none')}`);
  const perms = Object.entries(cfg.permissions);
  out(`${c.bold('Permissions')}      ${perms.length ? '' : c.dim('defaults only')}`);
  for (const [plugin, p] of perms) {
    if (p.default) out(`  ${plugin}: ${p.default}`);
    for (const [tool, perm] of Object.entries(p.tools ?? {})) out(`  ${plugin}.${tool}: ${perm}`);
  }
  const origins = Object.entries(cfg.pageOrigins ?? {});
  out(`${c.bold('Page origins')}     ${origins.length ? '' : c.dim('none (page tools ask)')}`);
  for (const [origin, perm] of origins) out(`  ${origin}: ${perm}`);
  const settings = Object.entries(cfg.pluginSettings);
  out(`${c.bold('Plugin settings')}  ${settings.length ? '' : c.dim('none')}`);
  for (const [plugin, s] of settings) for (const [k, v] of Object.entries(s)) out(`  ${plugin}.${k} = ${JSON.stringify(v)}`);
  return 0;
}

const BROWSER_PLUGIN = 'browser';
const BUILTIN_PREFIX = /^(browser|extension|plugin|opentabs)_/;

/** A built-in tool's name as config.json keys it, or a usage error naming the close ones. */
function builtinTool(key: string, name: string): string {
  if (BROWSER_TOOL_NAMES.includes(name)) return name;
  const close = closeToolNames(name, BROWSER_TOOL_NAMES.map((n) => ({ name: n })));
  throw usageError(
    `Bad key "${key}": there is no built-in tool "${name}".${close.length ? ` Did you mean ${close.map((n) => `permission.${n}`).join(', ')}?` : ''} See \`opentabs tool list --plugin browser\`.`,
    'config set',
  );
}

/** permission.<…> key → the plugin and (optionally) the tool key config.json uses. */
export function parsePermissionKey(key: string): { plugin: string; tool?: string } {
  const rest = key.slice('permission.'.length);
  const parts = rest.split('.');
  if (rest === '' || parts.some((p) => p === '') || parts.length > 2) {
    throw usageError(`Bad key "${key}": expected permission.<plugin> or permission.<plugin>.<tool>.`, 'config set');
  }
  // Built-in tools are stored by full name under the "browser" plugin. Their prefixes (browser_,
  // extension_, plugin_, opentabs_) are reserved, so no plugin tool has one: an unknown name there
  // is a typo, which would otherwise be saved for a tool that does not exist.
  if (parts.length === 1 && BUILTIN_PREFIX.test(parts[0])) return { plugin: BROWSER_PLUGIN, tool: builtinTool(key, parts[0]) };
  // tab<id>_<name> is a tool a web page registered (no plugin may be named tab<id>): its
  // permission is its site's, and one saved under a plugin "tab5" would never apply.
  const pagePrefix = parts[0].split('_')[0]!;
  if (PAGE_TOOL_PREFIX_RE.test(pagePrefix)) {
    throw usageError(
      `Bad key "${key}": ${pagePrefix}_… names a tool a web page offers in tab ${pagePrefix.slice(3)}, not a plugin's. Page tools are allowed per site: ` +
        'pageOrigin.<origin> off|ask|auto (e.g. pageOrigin.https://app.example.com ask; `opentabs tool list` shows each page tool\'s origin).',
      'config set',
    );
  }
  // A full plugin tool name (permission.slack_send_message): plugin names never contain "_",
  // so the first "_" separates plugin and tool — otherwise this would silently set a plugin-wide
  // permission for a plugin that cannot exist.
  if (parts.length === 1 && parts[0].includes('_')) {
    const i = parts[0].indexOf('_');
    const plugin = parts[0].slice(0, i);
    if (!PLUGIN_NAME_RE.test(plugin) || i === parts[0].length - 1) throw usageError(`Bad key "${key}": "${parts[0]}" is neither a plugin name nor a <plugin>_<tool> name.`, 'config set');
    return { plugin, tool: parts[0].slice(i + 1) };
  }
  const [plugin, tool] = parts;
  if (plugin !== BROWSER_PLUGIN && !PLUGIN_NAME_RE.test(plugin)) {
    throw usageError(`Bad key "${key}": "${plugin}" is not a plugin name (lowercase words joined by "-").`, 'config set');
  }
  if (tool === undefined) return { plugin };
  if (plugin === BROWSER_PLUGIN) return { plugin, tool: builtinTool(key, tool) };
  // Accept the prefixed name too: permission.slack.slack_send_message → send_message.
  const prefixed = tool.startsWith(`${plugin}_`) || tool.startsWith(`${plugin.replace(/-/g, '_')}_`);
  return { plugin, tool: prefixed ? tool.slice(plugin.length + 1) : tool };
}

async function set(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { port: { type: 'string' } }, 'config set');
  if (values.help) return (say(SET_HELP), 0);
  if (positionals.length !== 2) {
    throw usageError(`Expected <key> <value>, got ${positionals.length} argument${positionals.length === 1 ? '' : 's'}.`, 'config set');
  }
  const [key, value] = positionals as [string, string];
  const t = resolveTarget(values.port, 'config set');

  if (key.startsWith('plugin.')) {
    const m = /^plugin\.([^.]+)\.(.+)$/.exec(key);
    if (!m) throw usageError(`Bad key "${key}": expected plugin.<name>.<setting>.`, 'config set');
    const [, plugin, setting] = m as unknown as [string, string, string];
    const settings = await parseSettingPairs(t.configDir, plugin, [`${setting}=${value}`]);
    const via = await savePluginSettings(t, plugin, settings);
    out(`Set ${plugin}.${setting} = ${JSON.stringify(settings[setting])}${via === 'server' ? ' (applied by the running server)' : ''}.`);
    return 0;
  }

  const store = await openConfigForWrite(t.configDir);
  let done: string;
  if (key.startsWith('permission.')) {
    if (!isPermission(value)) throw usageError(`Bad permission "${value}" for ${key}: expected off, ask or auto.`, 'config set');
    const { plugin, tool } = parsePermissionKey(key);
    // A typo is refused before anything is saved: a permission kept for a plugin nobody added
    // would apply to whatever package of that name is added later.
    if (plugin !== BROWSER_PLUGIN) {
      const unknown = await unknownPermissionTarget(t.configDir, plugin, tool);
      if (unknown) throw usageError(`Bad key "${key}": ${unknown}`, 'config set');
    }
    if (tool) await store.setToolPermission(plugin, tool, value);
    else await store.setPluginPermission(plugin, value);
    done = `Permission of ${tool ? `${plugin} tool ${tool}` : `plugin ${plugin}`} set to ${value}.`;
  } else if (key.startsWith('pageOrigin.')) {
    const given = key.slice('pageOrigin.'.length);
    const origin = normalizeOrigin(given);
    if (origin === null || !isBareOrigin(given)) {
      throw usageError(`Bad key "${key}": expected pageOrigin.<origin>, an http(s) origin without a path, e.g. pageOrigin.https://app.example.com.`, 'config set');
    }
    if (!isPermission(value)) throw usageError(`Bad permission "${value}" for ${key}: expected off, ask or auto.`, 'config set');
    await store.setOriginPermission(origin, value);
    done = `Page tools of ${origin} set to ${value}.`;
  } else if (key === 'skipPermissions') {
    const b = parseBool(value, 'skipPermissions value', 'config set');
    await store.update((d) => {
      d.skipPermissions = b;
    });
    done = `skipPermissions set to ${b}.`;
  } else if (key === 'allowFileUrls' || key === 'allow-file-urls') {
    const b = parseBool(value, 'allowFileUrls value', 'config set');
    await store.update((d) => {
      d.allowFileUrls = b;
    });
    done = `allowFileUrls set to ${b}.`;
  } else if (key === 'mcpSessionsPerMinute') {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !isSessionsPerMinute(n)) throw usageError(`Bad mcpSessionsPerMinute "${value}": expected a whole number from 1 to ${MCP_SESSIONS_PER_MINUTE_MAX}.`, 'config set');
    await store.update((d) => {
      d.mcpSessionsPerMinute = n;
    });
    done = `mcpSessionsPerMinute set to ${n}.`;
  } else if (key === 'uploadFolders') {
    // A shell expands ~ only at the start of the value (~/a,~/b gives /home/me/a,~/b), and not in quotes: ~/ here is the home folder too.
    const home = (f: string) => (f === '~' ? homedir() : f.startsWith('~/') ? join(homedir(), f.slice(2)) : f);
    const folders = value.split(',').map((f) => home(f.trim())).filter((f) => f !== '');
    for (const f of folders) {
      if (!isAbsolute(f)) throw usageError(`Bad uploadFolders entry "${f}": expected an absolute folder path, e.g. ${join(homedir(), 'Documents', 'to-upload')}.`, 'config set');
      if (!existsSync(f) || !statSync(f).isDirectory()) throw usageError(`Bad uploadFolders entry "${f}": no folder there. Create it first (\`mkdir -p ${shellWord(f)}\`) and put only the files you mean to share in it.`, 'config set');
    }
    await store.update((d) => {
      d.uploadFolders = folders;
    });
    done = folders.length ? `browser_upload_file may take files from ${folders.join(', ')}.` : 'browser_upload_file may take files from no folder.';
  } else {
    throw usageError(`Unknown key "${key}". Supported: permission.<plugin>[.<tool>], skipPermissions, allowFileUrls, plugin.<name>.<setting>, pageOrigin.<origin>, mcpSessionsPerMinute, uploadFolders.`, 'config set');
  }
  const reloaded = await reloadIfRunning(t);
  out(`${done}${reloaded ? ' The running server reloaded it.' : ''}`);
  return 0;
}

/**
 * Why a permission cannot be saved for this plugin (or this tool of it): no installed or added
 * plugin has that name, or the plugin has no such tool. null when they exist, when the plugin is
 * there but failed to load (its tools are not known), or when the plugins cannot be read.
 */
async function unknownPermissionTarget(dir: string, plugin: string, tool: string | undefined): Promise<string | null> {
  const { scanPlugins } = await import('../plugin-lookup.ts');
  const scan = await scanPlugins(dir).catch(() => null);
  if (!scan || scan.failed.some((f) => f.name === plugin)) return null;
  const found = scan.plugins.find((p) => p.name === plugin);
  if (!found) {
    const known = scan.plugins.map((p) => ({ name: p.name }));
    const close = closeToolNames(plugin, known);
    return (
      `no plugin named "${plugin}" is installed or added.` +
      (close.length ? ` Did you mean ${close.map((n) => `permission.${n}`).join(', ')}?` : '') +
      ` Known plugins: ${known.map((p) => p.name).join(', ') || 'none'} (\`opentabs plugin list\`). Add the plugin first, then set its permission.`
    );
  }
  if (tool === undefined || found.tools.some((x) => x.name === tool)) return null;
  const close = closeToolNames(tool, found.tools);
  return (
    `plugin ${plugin} has no tool "${tool}".` +
    (close.length ? ` Did you mean ${close.map((n) => `permission.${plugin}.${n}`).join(', ')}?` : '') +
    ` Its tools: ${found.tools.map((x) => x.name).join(', ') || 'none'}.`
  );
}

/** An origin as typed: scheme://host[:port] with nothing after it but an optional "/". */
function isBareOrigin(text: string): boolean {
  try {
    const u = new URL(text);
    return u.pathname === '/' && !/^[a-z]+:\/\/[^/]*\/./i.test(text) && u.search === '' && u.hash === '' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

async function rotate(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { port: { type: 'string' } }, 'config rotate-secret');
  if (values.help) return (say(ROTATE_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'config rotate-secret');
  const t = resolveTarget(values.port, 'config rotate-secret');
  // setup finds the port as this command did, unless it came from --port or PORT.
  const portArgs = t.portSource === 'flag' || t.portSource === 'env' ? ['--port', String(t.port)] : [];
  const old = readSecretSync(t.configDir);
  // Found before the rotation, while they still match: the clients to give the new token.
  const holders = clientConfigsHolding([readClientTokenSync(t.configDir), old]);
  await rotateSecret(t.configDir);
  let reloaded = false;
  try {
    // The server still holds the old secret until it reloads: authenticate with that one.
    reloaded = await reloadIfRunning(t, old);
  } catch (e) {
    throw new CliError(`The new secret is written, but the running server did not reload: ${(e as Error).message}. Restart it: \`opentabs stop && opentabs start\`.`);
  }
  out(`New secret written to ${secretPath(t.configDir)}, new client token to ${clientTokenPath(t.configDir)}.`);
  say(
    runnableCommands(
      (reloaded
        ? 'The running server now uses it and the new client token; the extension reconnects by itself.'
        : 'The server is not running; it will use the new secret and client token when started.') +
        ' Your MCP clients hold the old client token: run `opentabs setup` again for each client' +
        (holders.length > 0
          ? `; these files hold it: ${holders.map((h) => `${h.path} (\`${['opentabs', 'setup', ...h.setup, ...portArgs].map(shellWord).join(' ')}\`)`).join(', ')}`
          : ', e.g. `opentabs setup claude-code`') +
        ' (`opentabs start --show-config` shows every entry).',
    ),
  );
  return 0;
}
