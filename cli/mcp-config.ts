/**
 * Ready-to-paste MCP client configuration (what `opentabs start` prints on first run and with
 * --show-config): the Streamable HTTP entry each client's config file expects (Claude Code,
 * Cursor, Windsurf, OpenCode, VS Code, Gemini CLI, Codex CLI, …), with the client token
 * (<config dir>/client-token.json) in an Authorization header: never the secret of auth.json,
 * which also answers approvals and opens the extension's connection. The first-run banner leaves out the VS Code and Gemini settings.json
 * blocks (both clients have a one-line form or a shorter block in the banner) and says how to see
 * them; --show-config prints everything.
 */
import { join, resolve } from 'node:path';
import { runnableArgv, selfSpawnCommand, shellWord } from './self.ts';
import { homeDir } from '../server/protocol/local-files.ts';
import { claudeCodeUserFile, claudeDesktopFile, codexUserFile, vscodeUserFile } from './setup/paths.ts';
import { c } from './output.ts';

export const CLI_MODE_LINE =
  "Use `opentabs tool list` and `opentabs tool call <name> '<json>'` to interact with web apps via the browser.";

/** The environment variable the Codex CLI command tells Codex to read the client token from. */
export const CODEX_SECRET_VAR = 'OPENTABS_SECRET';

export interface McpConfigs {
  claudeCodeCommand: string;
  claudeCode: object;
  cursor: object;
  opencode: object;
  windsurf: object;
  /** VS Code (GitHub Copilot agent mode): .vscode/mcp.json or the user profile's mcp.json. */
  vscode: object;
  geminiCommand: string;
  /** Gemini CLI's ~/.gemini/settings.json: `httpUrl` is its Streamable HTTP field (`url` is SSE). */
  gemini: object;
  /**
   * Codex CLI: `codex mcp add --bearer-token-env-var` keeps the token out of config.toml; Codex
   * sends `Authorization: Bearer $OPENTABS_SECRET` when a session starts. The export line reads the
   * current client token with `opentabs config client-token` (this CLI only: no jq), so it still
   * holds after `opentabs config rotate-secret` in a new shell.
   */
  codexCommand: string;
  codexExport: string;
  /** Codex CLI's ~/.codex/config.toml table: a literal header goes in `http_headers`. */
  codexToml: string;
  gateway: object;
  cliModeLine: string;
  extensionDir: string;
}

/** The clients `opentabs setup <client>` configures. */
export const SETUP_CLIENTS = ['claude-code', 'cursor', 'vscode', 'windsurf', 'gemini', 'codex', 'opencode', 'claude-desktop'] as const;

/** The clients whose server entry is a Streamable HTTP URL with the bearer header. */
export type HttpClient = 'claude-code' | 'cursor' | 'opencode' | 'windsurf' | 'vscode' | 'gemini' | 'codex';

/**
 * Each client's server entry for `url` (…/mcp or …/mcp/gateway): the one definition both the
 * blocks below (--show-config) and `opentabs setup <client>` use, so what setup writes is what
 * --show-config prints.
 */
export function httpEntry(client: HttpClient, url: string, token: string): Record<string, unknown> {
  const headers = { Authorization: `Bearer ${token}` };
  switch (client) {
    case 'claude-code':
    case 'vscode':
      return { type: 'http', url, headers };
    // Cursor's documented remote form: a url (Streamable HTTP, falling back to SSE) and headers.
    case 'cursor':
      return { url, headers };
    case 'opencode':
      return { type: 'remote', url, headers, enabled: true };
    case 'windsurf':
      return { serverUrl: url, headers };
    // Gemini CLI: `httpUrl` is its Streamable HTTP field (`url` is SSE).
    case 'gemini':
      return { httpUrl: url, headers };
    // Codex CLI: a literal header goes in `http_headers`.
    case 'codex':
      return { url, http_headers: headers };
  }
}

/** The key of the object that holds the servers in each client's file. */
export const SERVERS_KEY: Record<HttpClient | 'claude-desktop', string> = {
  'claude-code': 'mcpServers',
  'claude-desktop': 'mcpServers',
  cursor: 'mcpServers',
  opencode: 'mcp',
  windsurf: 'mcpServers',
  vscode: 'servers',
  gemini: 'mcpServers',
  codex: 'mcp_servers',
};

const block = (client: HttpClient | 'claude-desktop', entry: object) => ({ [SERVERS_KEY[client]]: { opentabs: entry } });

/** Codex's TOML table for an entry (strings and flat tables of strings). */
export function codexTomlTable(entry: Record<string, unknown>): string {
  const str = (v: unknown) => JSON.stringify(v);
  const lines = [`[${SERVERS_KEY.codex}.opentabs]`];
  for (const [k, v] of Object.entries(entry)) {
    lines.push(
      typeof v === 'object' && v !== null
        ? `${k} = { ${Object.entries(v)
            .map(([ik, iv]) => `${/^[A-Za-z0-9_-]+$/.test(ik) ? ik : str(ik)} = ${str(iv)}`)
            .join(', ')} }`
        : `${k} = ${str(v)}`,
    );
  }
  return lines.join('\n');
}

/** `token`: the client token of `configDir` (client-token.json). */
export function mcpConfigs(baseUrl: string, token: string, configDir: string): McpConfigs {
  const url = `${baseUrl}/mcp`;
  const entry = (client: HttpClient) => block(client, httpEntry(client, url, token));
  return {
    // --scope user: in every folder, as the ~/.claude.json block (Claude Code's default scope is
    // the current folder only).
    claudeCodeCommand: `claude mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${token}"`,
    claudeCode: entry('claude-code'),
    cursor: entry('cursor'),
    opencode: entry('opencode'),
    windsurf: entry('windsurf'),
    vscode: entry('vscode'),
    geminiCommand: `gemini mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${token}"`,
    gemini: entry('gemini'),
    codexCommand: `codex mcp add opentabs --url ${url} --bearer-token-env-var ${CODEX_SECRET_VAR}`,
    codexExport: `export ${CODEX_SECRET_VAR}="$(${clientTokenCommand(configDir)})"`,
    codexToml: codexTomlTable(httpEntry('codex', url, token)),
    gateway: block('claude-code', httpEntry('claude-code', `${baseUrl}/mcp/gateway`, token)),
    cliModeLine: CLI_MODE_LINE,
    extensionDir: join(configDir, 'extension'),
  };
}

/**
 * The command that prints the secret of `configDir` alone, as it runs in a shell: the absolute
 * command when `opentabs` is not on PATH, with OPENTABS_CONFIG_DIR when the dir is not the default.
 */
export function secretCommand(configDir: string): string {
  return commandFor(configDir, ['config', 'secret']);
}

/** The command that prints the client token of `configDir` alone (see secretCommand). */
export function clientTokenCommand(configDir: string): string {
  return commandFor(configDir, ['config', 'client-token']);
}

/** `opentabs <args>` for `configDir`, as it runs in a shell (see secretCommand). */
export function commandFor(configDir: string, args: string[]): string {
  const assign = process.platform === 'win32' || resolve(configDir) === resolve(homeDir(), '.opentabs') ? '' : `OPENTABS_CONFIG_DIR=${shellWord(configDir)} `;
  return assign + runnableArgv(args).map(shellWord).join(' ');
}

/**
 * The client config files the configuration above tells users to put the client token in, and
 * that `opentabs setup <client>` writes (absolute paths; the project-level ones in `cwd`), for
 * `opentabs doctor` to check who can read them.
 */
export function clientConfigFiles(cwd: string, home = homeDir(), env: Record<string, string | undefined> = process.env): string[] {
  const desktop = claudeDesktopFile(env, home);
  return [...clientConfigSetups(cwd, home, env).map((f) => f.path), ...(desktop ? [desktop] : [])];
}

/**
 * The files of clientConfigFiles that hold an HTTP entry, each with the `opentabs setup` arguments
 * that write it (after `setup`), so doctor can name the command that rewrites one.
 */
export function clientConfigSetups(cwd: string, home = homeDir(), env: Record<string, string | undefined> = process.env): { path: string; setup: string[] }[] {
  const project = (client: string) => [client, '--project', '--dir', cwd];
  return [
    { path: join(home, '.claude.json'), setup: ['claude-code'] },
    { path: claudeCodeUserFile(env, home), setup: ['claude-code'] },
    { path: join(cwd, '.mcp.json'), setup: project('claude-code') },
    { path: join(cwd, '.cursor', 'mcp.json'), setup: project('cursor') },
    { path: join(home, '.cursor', 'mcp.json'), setup: ['cursor'] },
    { path: join(cwd, 'opencode.json'), setup: ['opencode', '--dir', cwd] },
    { path: join(home, '.config', 'opencode', 'opencode.json'), setup: ['opencode', '--global'] },
    { path: join(home, '.codeium', 'windsurf', 'mcp_config.json'), setup: ['windsurf'] },
    { path: join(home, '.gemini', 'settings.json'), setup: ['gemini'] },
    { path: join(cwd, '.gemini', 'settings.json'), setup: project('gemini') },
    { path: join(home, '.codex', 'config.toml'), setup: ['codex'] },
    { path: codexUserFile(env, home), setup: ['codex'] },
    { path: join(cwd, '.codex', 'config.toml'), setup: project('codex') },
    { path: join(cwd, '.vscode', 'mcp.json'), setup: project('vscode') },
    { path: vscodeUserFile(false, env, home), setup: ['vscode'] },
    { path: vscodeUserFile(true, env, home), setup: ['vscode', '--insiders'] },
  ];
}

/**
 * A stdio client's server entry for `opentabs mcp`: always the absolute command (Bun and this
 * install's cli/main.ts, or the single-file binary), even when `opentabs` is on the shell's PATH:
 * clients started from a desktop launcher (Claude Desktop) get a PATH without npm's global bin
 * and without `node`, which the npm `opentabs` shim needs. With OPENTABS_CONFIG_DIR when the
 * config dir is not the default.
 */
export function stdioConfig(configDir: string): object {
  const [command, ...args] = [...selfSpawnCommand(), 'mcp'];
  const env = resolve(configDir) === resolve(homeDir(), '.opentabs') ? undefined : { OPENTABS_CONFIG_DIR: configDir };
  return { mcpServers: { opentabs: { command, args, ...(env ? { env } : {}) } } };
}

/**
 * Human text. JSON blocks start with a line "{" and end with a line "}" so they can be copied (and
 * parsed) whole. `full` (--show-config) adds the VS Code and Gemini settings.json blocks.
 */
export function renderMcpConfig(baseUrl: string, token: string, configDir: string, full = true): string {
  const m = mcpConfigs(baseUrl, token, configDir);
  const json = (v: object) => JSON.stringify(v, null, 2);
  return [
    c.bold('Connect your AI client'),
    '',
    `One command writes the entry into the client's own file, keeping the rest (add --print to see it first):`,
    `${commandFor(configDir, ['setup'])} <client>`,
    `  <client>: ${SETUP_CLIENTS.join(', ')}. Or by hand:`,
    '',
    `${c.cyan('Claude Code')} — run (replacing an entry, e.g. after a new token: \`claude mcp remove opentabs\` first):`,
    m.claudeCodeCommand,
    '',
    `${c.cyan('Claude Code')} — or merge into ~/.claude.json:`,
    json(m.claudeCode),
    '',
    `${c.cyan('Cursor')} — .cursor/mcp.json:`,
    json(m.cursor),
    '',
    `${c.cyan('OpenCode')} — opencode.json (or run \`opentabs setup opencode\`):`,
    json(m.opencode),
    '',
    `${c.cyan('Windsurf')} — ~/.codeium/windsurf/mcp_config.json:`,
    json(m.windsurf),
    '',
    `${c.cyan('Gemini CLI')} — run:`,
    m.geminiCommand,
    '',
    ...(full ? [`${c.cyan('Gemini CLI')} — or merge into ~/.gemini/settings.json:`, json(m.gemini), ''] : []),
    `${c.cyan('Codex CLI')} — run (Codex reads the client token from ${CODEX_SECRET_VAR} when a session starts; put the export line in your shell profile):`,
    m.codexExport,
    m.codexCommand,
    '',
    `${c.cyan('Codex CLI')} — or add to ~/.codex/config.toml (the token in the file, no variable):`,
    m.codexToml,
    '',
    ...(full
      ? [`${c.cyan('VS Code')} (GitHub Copilot agent mode) — .vscode/mcp.json, or the user mcp.json (command MCP: Open User Configuration):`, json(m.vscode), '']
      : [`${c.cyan('VS Code')} (GitHub Copilot agent mode) and Gemini's settings.json: see \`opentabs start --show-config\`.`, '']),
    `${c.cyan('Gateway variant')} — only 2 tools in context (opentabs_list_tools, opentabs_call); same headers, URL ending in /mcp/gateway:`,
    json(m.gateway),
    '',
    `${c.cyan('CLI mode')} — no MCP at all; add this line to your agent's instructions (CLAUDE.md, AGENTS.md):`,
    m.cliModeLine,
    '',
    `${c.cyan('Stdio-only clients')} (Claude Desktop: Settings → Developer → Edit Config, claude_desktop_config.json; MCP Inspector): command \`opentabs mcp\`, e.g.:`,
    json(stdioConfig(configDir)),
    '',
    c.bold('Load the Chrome extension (once)'),
    `chrome://extensions → turn on Developer mode → Load unpacked → ${m.extensionDir}`,
    '',
    `Every entry above carries the client token of ${join(configDir, 'client-token.json')} (print it with \`${clientTokenCommand(configDir)}\`): it reaches MCP and tool calls, not approvals, settings or the extension's connection, which take the secret of auth.json (\`${secretCommand(configDir)}\`: for you and the CLI, not for clients).`,
    `Show this again with \`opentabs start --show-config\`.`,
  ].join('\n');
}
