/** `opentabs setup opencode`: opencode.json `mcp` entry (merged, atomic) + an OpenCode plugin file. */
import { existsSync, readFileSync, statSync } from 'node:fs';
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
import { resolveTarget, secretFor } from '../server-client.ts';

const HELP = `Usage: opentabs setup <client> …

  opentabs setup opencode [--dir D] [--gateway] [--port N]

Other clients: \`opentabs start --show-config\` prints ready-to-paste blocks for Claude Code,
Cursor, Windsurf, VS Code (GitHub Copilot), Gemini CLI and Codex CLI.`;

const OPENCODE_HELP = `Usage: opentabs setup opencode [--dir D] [--gateway] [--port N]

In project folder D (default: the current folder):
  - opencode.json: adds/updates the "mcp.opentabs" entry (type remote, URL, Authorization header),
    keeping every other key; the file is replaced atomically with mode 0600 (an existing file's
    wider mode is tightened). It contains your secret — keep it out of version control.
  - .opencode/plugin/opentabs.ts: an OpenCode plugin that logs OpenTabs tool calls
    (tool.execute.before/after) and adds the current browser state to the context when a session
    is compacted (experimental.session.compacting).

Options:
  --dir D      Project folder (default .)
  --gateway    Point OpenCode at /mcp/gateway (2 meta-tools) instead of /mcp
  --port N     Server port`;

export const MCP_NAME = 'opentabs';

export const command: Command = {
  name: 'setup',
  summary: 'Setup',
  help: HELP,
  run: (argv) => runGroup('setup', HELP, { opencode }, argv),
};

async function opencode(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { dir: { type: 'string' }, gateway: { type: 'boolean' }, port: { type: 'string' } }, 'setup opencode');
  if (values.help) return (say(OPENCODE_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'setup opencode');
  const dir = resolve(values.dir ?? '.');
  if (!existsSync(dir)) throw new CliError(`${dir} does not exist: create the project folder first, or give an existing one with --dir.`);
  if (!statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder.`);
  const t = resolveTarget(values.port, 'setup opencode');
  const secret = secretFor(t.configDir);
  if (!secret) throw new CliError(`No secret in ${t.configDir} yet: run \`opentabs start\` once first.`);

  const configPath = join(dir, 'opencode.json');
  let config: Record<string, unknown> = {};
  // The file holds the secret: 0600 whatever its mode was (a 0644 file would let any local user read it).
  let oldMode: number | null = null;
  if (existsSync(configPath)) {
    const text = readFileSync(configPath, 'utf8');
    try {
      const parsed = text.trim() === '' ? {} : JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the top level is not an object');
      config = parsed;
    } catch (e) {
      throw new CliError(`${configPath} is not valid JSON (${(e as Error).message}); left it unchanged. Fix it (comments are not supported here) and retry.`);
    }
    oldMode = statSync(configPath).mode & 0o777;
  }
  const mcp = typeof config.mcp === 'object' && config.mcp !== null && !Array.isArray(config.mcp) ? (config.mcp as Record<string, unknown>) : {};
  const existed = MCP_NAME in mcp;
  mcp[MCP_NAME] = {
    type: 'remote',
    url: `${t.url}${values.gateway ? '/mcp/gateway' : '/mcp'}`,
    headers: { Authorization: `Bearer ${secret}` },
    enabled: true,
  };
  const next = { ...(existsSync(configPath) ? {} : { $schema: 'https://opencode.ai/config.json' }), ...config, mcp };
  await writeFileAtomic(configPath, `${JSON.stringify(next, null, 2)}\n`, 0o600);

  const pluginDir = join(dir, '.opencode', 'plugin');
  await mkdir(pluginDir, { recursive: true });
  const pluginPath = join(pluginDir, 'opentabs.ts');
  await writeFileAtomic(pluginPath, opencodePluginSource({ url: t.url, configDir: t.configDir, mcpName: MCP_NAME }), 0o644);

  out(`${existed ? 'Updated' : 'Added'} mcp.${MCP_NAME} in ${configPath}`);
  out(
    oldMode !== null && oldMode !== 0o600
      ? `Changed ${configPath} from mode ${oldMode.toString(8).padStart(4, '0')} to 0600 (only you can read it): it holds your OpenTabs secret.`
      : `${configPath} is mode 0600 (only you can read it): it holds your OpenTabs secret.`,
  );
  out(`Wrote OpenCode plugin ${pluginPath}`);
  err('note: opencode.json now holds your OpenTabs secret; keep it out of version control (e.g. add it to .gitignore).');
  // OpenCode hides the server's 429 behind its SSE fallback: say what its error means here.
  const perMinute = readConfigSnapshot(t.configDir).mcpSessionsPerMinute ?? MCP_SESSION_RATE_LIMIT.max;
  err(
    `note: OpenCode starts an MCP session each time it runs, and the server allows ${perMinute} new sessions a minute; ` +
      `past that OpenCode shows "SSE error: Non-200 status code (400)". Wait a minute, or allow more: \`${selfCommandText(['config', 'set', 'mcpSessionsPerMinute', String(Math.max(30, perMinute * 2))])}\`.`,
  );
  return 0;
}
