/**
 * `opentabs setup <client>`: writes the OpenTabs entry into an MCP client's own configuration file
 * (cli/setup/clients.ts says which file, in which format), merging it with what is there. The
 * entry is the one `opentabs start --show-config` prints (cli/mcp-config.ts). For OpenCode it also
 * writes an OpenCode plugin file; for Claude Code's user scope it runs `claude mcp add-json` when
 * `claude` is on PATH (Claude Code then edits its own ~/.claude.json, which also holds its state).
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MCP_SESSION_RATE_LIMIT } from '../../server/limits.ts';
import { writeFileAtomic } from '../../server/state/atomic.ts';
import { parse } from '../args.ts';
import { runGroup, type Command } from '../command.ts';
import { CliError, err, out, usageError, say } from '../output.ts';
import { readConfigSnapshot } from '../config-snapshot.ts';
import { opencodePluginSource } from '../opencode-plugin-template.ts';
import { selfCommandText } from '../self.ts';
import { clientTokenFor, resolveTarget, secretFor, type Target } from '../server-client.ts';
import { codexTomlTable, httpEntry, SERVERS_KEY, SETUP_CLIENTS, stdioConfig, type HttpClient } from '../mcp-config.ts';
import { CLIENTS, type ClientId, type ClientSpec } from '../setup/clients.ts';
import { applyPlan, insideProject, modeText, planEdit, type Plan } from '../setup/file-edit.ts';
import { parseJson, STRICT_JSON } from '../setup/jsonc.ts';
import { opencodeUserDir } from '../setup/paths.ts';

export const MCP_NAME = 'opentabs';

const PROJECT_OPTIONS = `  --project    Write the client's project file in the current folder (or --dir D) instead of
               the user-wide one
  --dir D      The project folder for --project
`;
const COMMON_OPTIONS = `  --file F     Write this file instead (same format), e.g. a second VS Code profile's mcp.json
  --gateway    Point the client at /mcp/gateway (2 meta-tools) instead of /mcp (every tool)
  --port N     Server port
  --print      Show what would be written, and where; write nothing
  --remove     Take the opentabs entry out again (other entries stay)`;

const HELP = `Usage: opentabs setup <client> [--project [--dir D]] [--gateway] [--port N] [--print] [--remove]

Writes the OpenTabs server entry (the one \`opentabs start --show-config\` prints) into the
client's own configuration file, keeping everything else in it. Running it again changes nothing;
after \`opentabs config rotate-secret\` it updates the token.

Clients:
  claude-code     ~/.claude.json (through \`claude mcp add-json\` when claude is on PATH); --project: .mcp.json
  cursor          ~/.cursor/mcp.json; --project: .cursor/mcp.json
  vscode          the user mcp.json (VS Code, GitHub Copilot); --project: .vscode/mcp.json
  windsurf        ~/.codeium/windsurf/mcp_config.json
  gemini          ~/.gemini/settings.json; --project: .gemini/settings.json
  codex           ~/.codex/config.toml ($CODEX_HOME); --project: .codex/config.toml
  opencode        opencode.json in the project folder (--global: ~/.config/opencode), and a plugin file
  claude-desktop  claude_desktop_config.json (macOS, Windows): the stdio bridge \`opentabs mcp\`

Options:
${PROJECT_OPTIONS}${COMMON_OPTIONS}

The entry carries your OpenTabs client token (<config dir>/client-token.json), never the secret
of auth.json: the token reaches MCP and tool calls, not approvals, settings or the extension's
connection. A new file is created readable by you only (0600), and an existing one loses group
and other access. A file that does not parse is left as it is, with the
parser's message. \`opentabs setup <client> --help\` says more.`;

const OPENCODE_HELP = `Usage: opentabs setup opencode [--dir D | --global] [--gateway] [--port N] [--print] [--remove]

In project folder D (default: the current folder), or with --global in OpenCode's global config
folder (~/.config/opencode, $XDG_CONFIG_HOME/opencode), for every project:
  - opencode.json: adds/updates the "mcp.opentabs" entry (type remote, URL, Authorization header),
    keeping everything else in it; the file is replaced atomically with mode 0600 (an existing
    file's wider mode is tightened). It contains your client token — keep it out of version control.
  - .opencode/plugin/opentabs.ts (--global: plugin/opentabs.ts): an OpenCode plugin that logs
    OpenTabs tool calls (tool.execute.before/after) and adds the current browser state to the
    context when a session is compacted (experimental.session.compacting).

Options:
  --dir D      Project folder (default .)
  --global     OpenCode's global config folder instead of a project
  --gateway    Point OpenCode at /mcp/gateway (2 meta-tools) instead of /mcp
  --port N     Server port
  --print      Show what would be written, and where; write nothing
  --remove     Take mcp.opentabs out of opencode.json and delete the plugin file setup wrote`;

function clientHelp(spec: ClientSpec): string {
  const user = spec.userFile({});
  const extra =
    spec.id === 'claude-code'
      ? `
With \`claude\` on PATH, the user-wide entry is written by running
\`claude mcp add-json --scope user opentabs -\` (the entry on stdin, so the token is not on a
command line); Claude Code keeps its own state in the same file and edits it under its lock.
  --no-cli     Edit ~/.claude.json directly even when claude is on PATH`
      : spec.id === 'vscode'
        ? `
VS Code's mcp.json may have comments and trailing commas: they are kept.
  --insiders   VS Code Insiders' user mcp.json`
        : spec.id === 'claude-desktop'
          ? `
Claude Desktop starts stdio servers only: the entry runs \`opentabs mcp\` (the stdio bridge) with
the absolute command, since an app started from the desktop may not have npm's bin on its PATH.`
          : '';
  const only = spec.id === 'claude-code' ? ' [--no-cli]' : spec.id === 'vscode' ? ' [--insiders]' : '';
  const where = spec.projectFile ? '[--project [--dir D] | --file F]' : '[--file F]';
  return `Usage: opentabs setup ${spec.id} ${where} [--gateway] [--port N] [--print | --remove]${only}

Writes the opentabs entry into ${spec.title}'s configuration:
  ${typeof user === 'string' ? user : user.none}${spec.projectFile ? `\n  --project: ${spec.projectFile('<folder>')}` : ''}
${extra}
Options:
${spec.projectFile ? PROJECT_OPTIONS : ''}${COMMON_OPTIONS}`;
}

export const command: Command = {
  name: 'setup',
  summary: 'Write the OpenTabs entry into an MCP client config file',
  help: HELP,
  run: (argv) =>
    runGroup(
      'setup',
      HELP,
      Object.fromEntries(SETUP_CLIENTS.map((id) => [id, id === 'opencode' ? opencode : (a: string[]) => client(CLIENTS[id], a)])),
      argv,
    ),
};

interface Values {
  project?: boolean;
  dir?: string;
  file?: string;
  gateway?: boolean;
  port?: string;
  print?: boolean;
  remove?: boolean;
  'no-cli'?: boolean;
  insiders?: boolean;
  help?: boolean;
}

function existingFolder(path: string): string {
  const dir = resolve(path);
  if (!existsSync(dir)) throw new CliError(`${dir} does not exist: create the project folder first, or give an existing one with --dir.`);
  if (!statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder.`);
  return dir;
}

/** The client token MCP clients get (never the secret of auth.json). */
function tokenOrFail(t: Target): string {
  const token = clientTokenFor(t.configDir);
  if (token) return token;
  if (secretFor(t.configDir)) throw new CliError(`No client token in ${t.configDir} yet: the server creates it when it starts; restart it (\`opentabs stop\`, then \`opentabs start\`).`);
  throw new CliError(`No client token in ${t.configDir} yet: run \`opentabs start\` once first.`);
}

/** The entry for this client, or undefined with --remove. */
function entryFor(id: ClientId, t: Target, v: Values): Record<string, unknown> | undefined {
  if (v.remove) return undefined;
  const token = id === 'claude-desktop' ? '' : tokenOrFail(t);
  if (id === 'claude-desktop') {
    const base = (stdioConfig(t.configDir) as { mcpServers: { opentabs: Record<string, unknown> & { args: string[] } } }).mcpServers.opentabs;
    const args = [...base.args, ...(v.gateway ? ['--gateway'] : []), ...(t.portSource === 'flag' || t.portSource === 'env' ? ['--port', String(t.port)] : [])];
    return { ...base, args };
  }
  return httpEntry(id as HttpClient, `${t.url}${v.gateway ? '/mcp/gateway' : '/mcp'}`, token);
}

/** The block as --show-config shows it (JSON, or Codex's TOML table). */
function blockText(id: ClientId, entry: Record<string, unknown>): string {
  return id === 'codex' ? codexTomlTable(entry) : JSON.stringify({ [SERVERS_KEY[id]]: { [MCP_NAME]: entry } }, null, 2);
}

function modeLine(id: ClientId, plan: Plan): string | null {
  const { path } = plan.edit;
  if (plan.edit.entry === undefined) return null;
  const mode = modeText(plan.newMode);
  // Claude Desktop's entry is the stdio bridge's command: no token in it.
  const why = id === 'claude-desktop' ? '' : ': it holds your OpenTabs client token';
  return plan.oldMode !== null && plan.oldMode !== plan.newMode
    ? `Changed ${path} from mode ${modeText(plan.oldMode)} to ${mode} (only you can read it)${why}.`
    : `${path} is mode ${mode} (only you can read it)${why}.`;
}

function printPlan(id: ClientId, plan: Plan): void {
  const key = `${plan.edit.container}.${MCP_NAME}`;
  const { path } = plan.edit;
  const link = plan.target !== path ? ` (a link to ${plan.target})` : '';
  if (!plan.changed) {
    out(plan.edit.entry === undefined ? `${path}${link} has no ${key}: nothing to remove.` : `${path}${link} already has this ${key} entry: nothing would change.`);
    return;
  }
  if (plan.edit.entry === undefined) {
    out(`Would remove ${key} from ${path}${link}; nothing else in it changes.`);
    return;
  }
  const how = plan.exists ? `keeping everything else in it, mode ${modeText(plan.newMode)}` : 'a new file, mode 0600';
  out(`Would ${plan.before === undefined ? 'add' : 'replace'} ${key} in ${path}${link} (${how}):`);
  out(blockText(id, plan.edit.entry));
}

/** Plan, then print or write, and say what happened. */
async function editAndReport(id: ClientId, plan: Plan, v: Values, projectScope: boolean): Promise<void> {
  if (v.print) return printPlan(id, plan);
  const key = `${plan.edit.container}.${MCP_NAME}`;
  const { path } = plan.edit;
  await applyPlan(plan);
  if (!plan.changed) {
    out(plan.edit.entry === undefined ? `${path} has no ${key}: nothing to remove.` : `${path} already has this ${key} entry: nothing written.`);
  } else {
    const verb = plan.edit.entry === undefined ? 'Removed' : plan.before === undefined ? 'Added' : 'Updated';
    out(`${verb} ${key} ${verb === 'Removed' ? 'from' : 'in'} ${path}${plan.target !== path ? ` (written to ${plan.target}, where the link points)` : ''}`);
  }
  const mode = modeLine(id, plan);
  if (mode) out(mode);
  if (plan.edit.entry !== undefined && projectScope) {
    err(`note: ${path} now holds your OpenTabs client token; keep it out of version control (e.g. add it to .gitignore).`);
  }
  if (plan.changed && plan.edit.entry !== undefined) err(`note: ${CLIENTS[id].after}`);
}

async function client(spec: ClientSpec, argv: string[]): Promise<number> {
  const cmd = `setup ${spec.id}`;
  const { values, positionals } = parse(
    argv,
    {
      project: { type: 'boolean' },
      dir: { type: 'string' },
      file: { type: 'string' },
      gateway: { type: 'boolean' },
      port: { type: 'string' },
      print: { type: 'boolean' },
      remove: { type: 'boolean' },
      ...(spec.id === 'claude-code' ? { 'no-cli': { type: 'boolean' as const } } : {}),
      ...(spec.id === 'vscode' ? { insiders: { type: 'boolean' as const } } : {}),
    },
    cmd,
  );
  const v = values as Values;
  if (v.help) return (say(clientHelp(spec)), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, cmd);
  if (v.dir !== undefined && !v.project) throw usageError('--dir goes with --project (the project folder).', cmd);
  if (v.file !== undefined && v.project) throw usageError('Give --file or --project, not both.', cmd);
  if (v.remove && v.gateway) throw usageError('--remove takes the entry out whatever its URL: leave out --gateway.', cmd);
  if (v.project && !spec.projectFile) throw usageError(`${spec.title} has no project-level configuration file; leave out --project.`, cmd);

  let path: string;
  const project = v.project ? existingFolder(v.dir ?? '.') : undefined;
  if (v.file !== undefined) path = resolve(v.file);
  else if (project !== undefined) path = spec.projectFile!(project);
  else {
    const user = spec.userFile({ insiders: v.insiders });
    if (typeof user !== 'string') throw new CliError(user.none);
    path = user;
  }
  const t = resolveTarget(v.port, cmd);
  const entry = entryFor(spec.id, t, v);

  if (spec.id === 'claude-code' && !v.project && v.file === undefined && !v['no-cli']) {
    const claude = Bun.which('claude');
    if (claude && (await claudeReadsStdin(claude))) return claudeCli(claude, path, entry, v);
  }
  const plan = planEdit({ path, format: spec.format, container: SERVERS_KEY[spec.id], name: MCP_NAME, entry, within: project });
  await editAndReport(spec.id, plan, v, Boolean(v.project));
  const shadow = spec.id === 'claude-code' && !v.project && !v.print && entry !== undefined ? claudeLocalShadow(path) : null;
  if (shadow) err(shadow);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Claude Code through its own CLI

async function run(argv: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(argv, { stdin: stdin === undefined ? 'ignore' : new Blob([stdin]), stdout: 'pipe', stderr: 'pipe', env: process.env });
  const timer = setTimeout(() => proc.kill(), 120_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether this `claude` reads `mcp add-json`'s JSON from stdin (`-`): older versions take it as an argument only. */
async function claudeReadsStdin(claude: string): Promise<boolean> {
  const r = await run([claude, 'mcp', 'add-json', '--help']);
  return r.code === 0 && /stdin/i.test(r.stdout);
}

/** The user-scope entry Claude Code has now: undefined when none, null when the file cannot be read. */
function claudeUserEntry(path: string): unknown {
  try {
    if (!existsSync(path)) return undefined;
    const root = parseJson(readFileSync(path, 'utf8'), STRICT_JSON).value as Record<string, unknown>;
    const servers = root?.mcpServers as Record<string, unknown> | undefined;
    return servers && typeof servers === 'object' && Object.hasOwn(servers, MCP_NAME) ? servers[MCP_NAME] : undefined;
  } catch {
    return null;
  }
}

/**
 * Claude Code uses the entry of the narrowest scope: one named opentabs for this folder (local
 * scope, `claude mcp add` without --scope, kept in the same file) hides the user-wide one here.
 */
function claudeLocalShadow(path: string, cwd = process.cwd()): string | null {
  try {
    const root = parseJson(readFileSync(path, 'utf8'), STRICT_JSON).value as { projects?: Record<string, { mcpServers?: Record<string, unknown> }> };
    const local = root.projects?.[cwd]?.mcpServers;
    if (local && typeof local === 'object' && Object.hasOwn(local, MCP_NAME)) {
      return `note: ${path} also has an opentabs entry for this folder only (local scope), which Claude Code uses here instead: \`claude mcp remove --scope local ${MCP_NAME}\` drops it.`;
    }
  } catch {}
  return null;
}

async function claudeCli(claude: string, path: string, entry: Record<string, unknown> | undefined, v: Values): Promise<number> {
  const key = `mcpServers.${MCP_NAME}`;
  const before = claudeUserEntry(path);
  const upToDate = entry === undefined ? before === undefined : before !== null && Bun.deepEquals(before, entry, true);
  if (upToDate) {
    out(entry === undefined ? `${path} has no ${key}: nothing to remove.` : `${path} already has this ${key} entry: nothing ${v.print ? 'would change' : 'written'}.`);
    return 0;
  }
  const remove = [claude, 'mcp', 'remove', '--scope', 'user', MCP_NAME];
  const add = [claude, 'mcp', 'add-json', '--scope', 'user', MCP_NAME, '-'];
  if (v.print) {
    if (entry === undefined) out(`Would run \`claude mcp remove --scope user ${MCP_NAME}\`: Claude Code takes ${key} out of ${path}.`);
    else {
      out(`Would run ${before !== undefined ? `\`claude mcp remove --scope user ${MCP_NAME}\`, then ` : ''}\`claude mcp add-json --scope user ${MCP_NAME} -\` with this entry on stdin; Claude Code writes it to ${key} in ${path}:`);
      out(blockText('claude-code', entry));
    }
    return 0;
  }
  const fail = (what: string, r: { code: number; stdout: string; stderr: string }) =>
    new CliError(`\`${what}\` failed (exit ${r.code}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}. ${path} is as Claude Code left it; \`opentabs setup claude-code --no-cli\` edits it directly.`);
  if (before !== undefined) {
    const r = await run(remove);
    if (r.code !== 0) throw fail(`claude mcp remove --scope user ${MCP_NAME}`, r);
  }
  if (entry !== undefined) {
    const r = await run(add, JSON.stringify(entry));
    if (r.code !== 0) throw fail(`claude mcp add-json --scope user ${MCP_NAME} -`, r);
  }
  const now = claudeUserEntry(path);
  const landed = entry === undefined ? now === undefined : now !== null && Bun.deepEquals(now, entry, true);
  const verb = entry === undefined ? 'Removed' : before === undefined ? 'Added' : 'Updated';
  out(`${verb} ${key} ${entry === undefined ? 'from' : 'in'} ${path} (with \`claude mcp ${entry === undefined ? 'remove' : 'add-json'} --scope user\`)`);
  if (!landed) err(`warning: ${path} does not show the entry as written; check it with \`claude mcp get ${MCP_NAME}\`.`);
  if (entry !== undefined) err(`note: ${CLIENTS['claude-code'].after}`);
  const shadow = entry !== undefined ? claudeLocalShadow(path) : null;
  if (shadow) err(shadow);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// OpenCode: opencode.json in a project folder, and the plugin file

const PLUGIN_MARK = '// Generated by `opentabs setup opencode`';

async function opencode(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { dir: { type: 'string' }, global: { type: 'boolean' }, gateway: { type: 'boolean' }, port: { type: 'string' }, print: { type: 'boolean' }, remove: { type: 'boolean' } },
    'setup opencode',
  );
  if (values.help) return (say(OPENCODE_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'setup opencode');
  if (values.remove && values.gateway) throw usageError('--remove takes the entry out whatever its URL: leave out --gateway.', 'setup opencode');
  if (values.global && values.dir !== undefined) throw usageError('Give --dir or --global, not both.', 'setup opencode');
  // OpenCode's global folder holds opencode.json and plugin/; a project holds opencode.json and .opencode/plugin/.
  const global = Boolean(values.global);
  const dir = global ? opencodeUserDir() : existingFolder(values.dir ?? '.');
  const t = resolveTarget(values.port, 'setup opencode');
  const v = values as Values;
  const entry = entryFor('opencode', t, v);
  const configPath = join(dir, 'opencode.json');
  const plan = planEdit({ path: configPath, format: CLIENTS.opencode.format, container: SERVERS_KEY.opencode, name: MCP_NAME, entry, within: global ? undefined : dir });
  // A new opencode.json starts with OpenCode's schema, for editors.
  if (!plan.exists && entry !== undefined) {
    plan.text = `${JSON.stringify({ $schema: 'https://opencode.ai/config.json', [SERVERS_KEY.opencode]: { [MCP_NAME]: entry } }, null, 2)}\n`;
  }
  const pluginDir = global ? join(dir, 'plugin') : join(dir, '.opencode', 'plugin');
  const pluginPath = join(pluginDir, 'opentabs.ts');
  const pluginOurs = existsSync(pluginPath) && readFileSync(pluginPath, 'utf8').startsWith(PLUGIN_MARK);
  if (v.print) {
    printPlan('opencode', plan);
    if (entry !== undefined) out(`Would write the OpenCode plugin ${pluginPath}.`);
    else if (pluginOurs) out(`Would delete the OpenCode plugin ${pluginPath}.`);
    return 0;
  }
  await editAndReport('opencode', plan, { ...v, print: false }, false);
  if (entry === undefined) {
    if (pluginOurs) {
      rmSync(pluginPath, { force: true });
      out(`Deleted OpenCode plugin ${pluginPath}`);
    }
    return 0;
  }
  if (!global) insideProject(pluginPath, dir);
  await mkdir(pluginDir, { recursive: true });
  await writeFileAtomic(pluginPath, opencodePluginSource({ url: t.url, configDir: t.configDir, mcpName: MCP_NAME }), 0o644);
  out(`Wrote OpenCode plugin ${pluginPath}`);
  if (!global) err(`note: ${configPath} now holds your OpenTabs client token; keep it out of version control (e.g. add it to .gitignore).`);
  // OpenCode hides the server's 429 behind its SSE fallback: say what its error means here.
  const perMinute = readConfigSnapshot(t.configDir).mcpSessionsPerMinute ?? MCP_SESSION_RATE_LIMIT.max;
  err(
    `note: OpenCode starts an MCP session each time it runs, and the server allows ${perMinute} new sessions a minute; ` +
      `past that OpenCode shows "SSE error: Non-200 status code (400)". Wait a minute, or allow more: \`${selfCommandText(['config', 'set', 'mcpSessionsPerMinute', String(Math.max(30, perMinute * 2))])}\`.`,
  );
  return 0;
}
