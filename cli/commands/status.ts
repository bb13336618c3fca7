/** `opentabs status`: server, extension, plugins and tabs from the authenticated /health. */
import { join } from 'node:path';
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, c, out, plural, printJson, printable, runnableCommands, say, table } from '../output.ts';
import { fetchHealth, notRunningMessage, resolveTarget, type HealthPayload } from '../server-client.ts';
import { failedPluginFix } from '../failed-plugin.ts';

const HELP = `Usage: opentabs status [--json] [--port N]

Show whether the server runs, whether the Chrome extension is connected, the loaded plugins
with their tab state and tabs, plugins that failed to load, and tool counts.
Exits 1 when the server is not running.

Options:
  --json       Print the full /health payload plus {running, url, configDir}
  --port N     Server port (default: PORT env, then the running server's pid file, then the
               port this config dir's server last ran on, then 9515)
  -h, --help   Show this help`;

export const command: Command = {
  name: 'status',
  summary: 'Show status',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'status');
    if (values.help) {
      say(HELP);
      return 0;
    }
    if (positionals.length > 0) throw new CliError(`Unexpected argument "${positionals[0]}". Run \`opentabs status --help\`.`, 2);
    const t = resolveTarget(values.port, 'status');
    const health = await fetchHealth(t);
    if (!health) {
      if (values.json) printJson({ running: false, url: t.url, configDir: t.configDir });
      else say(notRunningMessage(t).replace('not running', c.red('not running')));
      return 1;
    }
    if (values.json) {
      printJson({ running: true, url: t.url, configDir: t.configDir, ...health });
      return 0;
    }
    out(renderStatus(health, t.url, t.configDir));
    return 0;
  },
};

export function formatUptime(seconds: number | undefined): string {
  if (seconds === undefined) return '?';
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/**
 * Open MCP sessions, split into active and idle ones when the server reports it: a client that
 * exited without closing its session (many do) leaves an idle one until the server closes it.
 */
export function mcpClientsText(h: HealthPayload): string {
  const s = h.mcpSessions;
  if (!s || typeof s.active !== 'number' || typeof s.idle !== 'number') return String(h.mcpClients ?? 0);
  const minutes = (sec: number) => (sec < 60 ? `${sec} s` : `${Math.round(sec / 60)} min`);
  const idle =
    s.idle > 0
      ? `, ${s.idle} idle (no request for ${minutes(s.activeWindowSeconds)}+, often a client that has exited; closed after ${minutes(s.idleCloseSeconds)} idle)`
      : '';
  return `${s.active} active${idle}`;
}

/**
 * Said when another browser with the extension (another Chrome profile, say) waits while one holds
 * the server: which browser the tools act on, and how to switch.
 */
export const OTHER_BROWSER_WAITS =
  'another browser with the extension waits: the server serves one browser at a time, the one that connected last, and tools act on its tabs; ' +
  'the other takes over when this one disconnects (close it, or turn the extension off there)';

function renderStatus(h: HealthPayload, url: string, dir: string): string {
  const lines: string[] = [];
  lines.push(
    `${c.bold('Server')}      ${c.green('running')} on ${url}  (v${h.version ?? '?'}, ${h.mode ?? '?'} mode, up ${formatUptime(h.uptime)})`,
  );
  lines.push(
    `${c.bold('Extension')}   ${
      h.extensionConnected
        ? c.green(`connected${(h.extensionConnections ?? 1) > 1 ? ` (${h.extensionConnections} connections)` : ''}`) +
          (h.otherBrowser?.waiting ? c.yellow(`  · ${OTHER_BROWSER_WAITS}`) : '')
        : `${c.yellow('not connected')} — load it once: chrome://extensions → Developer mode → Load unpacked → ${join(dir, 'extension')}`
    }`,
  );
  lines.push(`${c.bold('MCP clients')} ${mcpClientsText(h)}`);
  lines.push(
    `${c.bold('Tools')}       ${h.toolCount ?? 0} (${h.browserToolCount ?? 0} browser, ${h.pluginToolCount ?? 0} plugin)${
      h.skipPermissions ? c.yellow('  · permission prompts skipped') : ''
    }`,
  );
  const a = h.auditSummary as { totalInvocations?: number; failureCount?: number; last24h?: { total: number; failure: number } } | undefined;
  if (a && typeof a.totalInvocations === 'number') {
    lines.push(
      `${c.bold('Tool calls')}  ${a.totalInvocations} (${a.failureCount ?? 0} failed)${a.last24h ? `; last 24h: ${a.last24h.total} (${a.last24h.failure} failed)` : ''} — ${runnableCommands('`opentabs audit`')}`,
    );
  }
  const plugins = h.pluginDetails ?? [];
  const failed = h.failedPlugins ?? [];
  lines.push(`${c.bold('Plugins')}     ${plugins.length} loaded${failed.length ? `, ${c.red(`${failed.length} failed`)}` : ''}`);
  if (plugins.length > 0) {
    const rows: string[][] = [];
    for (const p of plugins) {
      const tabs = p.tabs ?? [];
      const state = p.tabState === 'ready' ? c.green('ready') : p.tabState === 'unavailable' ? c.yellow('unavailable') : (p.tabState ?? 'closed');
      rows.push([`  ${p.name}`, plural(p.toolCount ?? p.tools?.length ?? 0, 'tool'), state, plural(tabs.length, 'tab'), p.source ?? '']);
      // Titles and URLs are the pages' text: control characters shown, not run (output.ts printable).
      for (const tab of tabs) {
        const state = tab.ready ? 'ready' : tab.loadError !== undefined ? c.red(`failed to load: ${printable(tab.loadError)}`) : 'not ready';
        rows.push([`    tab ${tab.tabId}`, state, '', printable(tab.title), printable(tab.url)]);
      }
    }
    lines.push(table(rows));
  }
  for (const f of failed) lines.push(`  ${c.red('failed')} ${f.name ?? f.path}: ${f.error}`, `    ${c.dim(`→ ${failedPluginFix(f)}`)}`);
  for (const e of h.discoveryErrors ?? []) lines.push(`  ${c.yellow('note')} ${e}`);
  return lines.join('\n');
}
