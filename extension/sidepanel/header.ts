/**
 * The panel's header: connected (server version, port, MCP clients active and idle) or why not and what to do.
 * data-state on #conn is connected | connecting | <DisconnectReason> (what the e2e tests read).
 */
import type { ConfigState } from '../../server/protocol/methods.ts';
import type { ConnectionState } from '../background/connection.ts';
import { DEFAULT_PORT } from '../../server/protocol/limits.ts';

const REASONS: Record<string, string> = {
  server_not_running: 'Server not running',
  auth_failed: 'Authentication failed',
  // The server could not prove it knows our secret (rotated secret, or another process on the port).
  server_unverified: 'Authentication failed',
  no_secret: 'Not set up',
  replaced: 'Replaced by another browser',
  closed: 'Disconnected',
};

/** Connected while another browser with the extension waits for the server (/health otherBrowser). */
const OTHER_BROWSER_WAITS =
  'Another browser with the extension (another Chrome profile or install) waits for the server, which serves one browser at a time: this one, the one that connected last, and tools act on its tabs. ' +
  'The other takes over when this one disconnects: turn OpenTabs off here (or close this browser) to switch.';

/** What the user can do about each disconnect reason (the worker's detail says what happened). */
function whatToDo(reason: string, cli: string, port: number | undefined): string | undefined {
  const start = `${cli} start${port !== undefined && port !== DEFAULT_PORT ? ` --port ${port}` : ''}`;
  const restart = `restart the server (${cli} stop, then ${start}) and reload this extension`;
  switch (reason) {
    case 'server_not_running':
      return `Start it in a terminal: ${start}`;
    case 'no_secret':
      return `Run ${start} once: it writes the secret this extension reads.`;
    case 'auth_failed':
      return `The secret changed: ${restart}.`;
    case 'server_unverified':
      return `The secret changed, or another program holds the port: ${restart}.`;
    case 'replaced':
      return 'Close OpenTabs in the other browser, or reload this extension to take over.';
    default:
      return undefined;
  }
}

/**
 * MCP clients as `opentabs status` counts them: the active sessions, and the idle ones apart (a
 * client that exited without closing its session stays open until the server closes it).
 */
function mcpClientsText(config: ConfigState): { text: string; title: string } {
  const s = config.mcpSessions;
  const clients = (n: number) => `${n} MCP client${n === 1 ? '' : 's'}`;
  if (!s) return { text: clients(config.mcpClients ?? 0), title: '' };
  const minutes = (sec: number) => (sec < 60 ? `${sec} s` : `${Math.round(sec / 60)} min`);
  const title =
    `Active: a request running or in the last ${minutes(s.activeWindowSeconds)}, or a stream open. ` +
    `Idle: no request for ${minutes(s.activeWindowSeconds)}+, often a client that has exited; closed after ${minutes(s.idleCloseSeconds)} idle.`;
  return { text: s.idle > 0 ? `${clients(s.active)} active, ${s.idle} idle` : clients(s.active), title };
}

export function renderHeader(c: ConnectionState, config: ConfigState | null): void {
  const pill = document.getElementById('conn')!;
  pill.dataset.status = c.status;
  pill.dataset.state = c.status === 'disconnected' ? (c.reason ?? 'closed') : c.status;
  pill.textContent = c.status === 'connected' ? `Connected :${c.port}` : c.status === 'connecting' ? 'Connecting…' : (REASONS[c.reason ?? ''] ?? 'Disconnected');
  const info = document.getElementById('server-info')!;
  if (c.status === 'connected' && config) {
    const { text, title } = mcpClientsText(config);
    info.textContent = `server ${config.serverVersion} · port ${c.port} · ${text}`;
    info.title = title;
    info.hidden = false;
  } else info.hidden = true;
  const detail = document.getElementById('conn-detail')!;
  // `opentabs` as the server wrote it for this machine (server.json), when it ever ran here.
  const todo = c.status === 'disconnected' ? whatToDo(c.reason ?? '', c.cli ?? 'opentabs', c.port) : undefined;
  // The waiting browser's panel says it waits (reason `replaced`); this one says another waits.
  const otherWaits = c.status === 'connected' && config?.otherBrowserWaiting === true ? OTHER_BROWSER_WAITS : undefined;
  detail.hidden = !c.detail && !todo && !otherWaits;
  detail.textContent = [c.detail, todo, otherWaits].filter(Boolean).join(' — ');
  detail.classList.toggle('warning', otherWaits !== undefined);
  if (otherWaits) detail.dataset.otherBrowser = 'waiting';
  else delete detail.dataset.otherBrowser;
}
