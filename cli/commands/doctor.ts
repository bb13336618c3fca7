/**
 * `opentabs doctor`: check the installation and explain each problem with its fix. Exit 1 when
 * any check fails (warnings alone exit 0).
 */
import { accessSync, constants, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { readRegularFileSync } from '../../server/protocol/regular-file.ts';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { DEFAULT_PORT, MCP_SESSIONS_PER_MINUTE_MAX } from '../../server/limits.ts';
import { readClientTokenSync, readSecretSync, secretPath } from '../../server/state/secret.ts';
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { c, oneLine, out, printJson, printable, runnableCommands, say, usageError } from '../output.ts';
import { configPath, isSessionsPerMinute } from '../../server/state/config.ts';
import { api, isAlive, noSecret, probePort, readPidFile, resolveTarget, secretFor, type HealthPayload, type Target } from '../server-client.ts';
import { CliError } from '../output.ts';
import { CODEX_SECRET_VAR, clientConfigFiles, clientConfigSetups, clientTokenCommand, commandFor } from '../mcp-config.ts';
import { describePortHolder, freePortAfter, insteadOf, otherServerFix } from '../port-holder.ts';
import { OTHER_BROWSER_WAITS, mcpClientsText } from './status.ts';
import { isCompiled, shellWord } from '../self.ts';
import { unreadableConfigDir } from '../config-dir-access.ts';
import { changedSince } from '../install-changed.ts';
import { extensionReloadPending } from '../extension-reload-pending.ts';
import { SERVER_BUNDLE_BUILD_COMMAND, bundleStaleReason } from '../server-bundle.ts';

const HELP = `Usage: opentabs doctor [--json] [--port N]

Check that everything OpenTabs needs is in place and say how to fix what is not:
config dir, secret file (present, valid, mode 0600), MCP client config files (~/.claude.json,
opencode.json, ~/.codex/config.toml …: readable by you only, holding the client token rather than
the secret, and not a token the server no longer takes), the server (reachable,
or who holds the port), the extension folder (installed) and the extension (connected), plugins
that failed to load, new MCP sessions the session limit refused in the last 10 minutes, and a
Chromium-based browser.
Exits 1 if any check fails.

Options:
  --json       Print the checks as JSON: [{check, status: ok|warn|fail, detail, fix?}]
  --port N     Server port`;

/** How recent a refused MCP session must be for doctor to mention it. */
const RECENT_REFUSAL_MS = 10 * 60_000;

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface Check {
  check: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** Chromium-based browsers: executables on PATH, then well-known install locations. */
const BROWSER_NAMES = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
  'google-chrome-beta',
  'brave-browser',
  'brave',
  'microsoft-edge',
  'microsoft-edge-stable',
  'vivaldi',
];
const BROWSER_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/opt/google/chrome/chrome',
  '/opt/brave.com/brave/brave',
  '/usr/bin/brave-browser',
  '/opt/microsoft/msedge/msedge',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Brave Browser.app/Contents/MacOS/Brave Browser',
  '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe',
  'C:\\Program Files\\BraveSoftware\\Brave-Browser\\Application\\brave.exe',
  'C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe',
];

export function findBrowsers(): string[] {
  const found = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const name of BROWSER_NAMES) {
      const p = join(dir, name);
      try {
        accessSync(p, constants.X_OK);
        found.add(p);
      } catch {}
    }
  }
  for (const p of BROWSER_PATHS) if (existsSync(p)) found.add(p);
  return [...found];
}

/** Client config files larger than this are not read (none of them is anywhere near it). */
const CLIENT_CONFIG_MAX_BYTES = 16 * 1024 * 1024;

/**
 * MCP client config files (those \`opentabs start --show-config\` names) that hold the secret or
 * the client token and that other users can read (group or world read bit): one warning each,
 * with the chmod that fixes it.
 */
export function clientConfigChecks(secret: string | null, cwd = process.cwd(), token: string | null = null): Check[] {
  if (!secret || process.platform === 'win32') return [];
  const checks: Check[] = [];
  for (const path of new Set(clientConfigFiles(cwd))) {
    let mode: number;
    let what: string;
    try {
      const st = statSync(path);
      if (!st.isFile() || st.size > CLIENT_CONFIG_MAX_BYTES) continue;
      mode = st.mode & 0o777;
      if ((mode & 0o044) === 0) continue;
      const text = readFileSync(path, 'utf8');
      if (text.includes(secret)) what = 'the OpenTabs secret';
      else if (token && text.includes(token)) what = 'the OpenTabs client token';
      else continue;
    } catch {
      continue;
    }
    checks.push({
      check: 'client config file',
      status: 'warn',
      detail: `${path} holds ${what} and is readable by other users (mode ${mode.toString(8).padStart(4, '0')})`,
      fix: `chmod 600 ${shellWord(path)}`,
    });
  }
  return checks;
}

/**
 * MCP client config files that hold the secret of auth.json rather than the client token (written
 * before the client token existed, or by hand): with the secret an agent that reads its own
 * client's config can answer its approvals and act as the extension. One warning each, with the
 * \`opentabs setup\` command that writes the token in its place (for this config dir, runnable as
 * printed); and Codex's variable when this environment holds the secret in it.
 */
export function clientSecretChecks(dir: string, secret: string | null, portArg = '', cwd = process.cwd(), env: Record<string, string | undefined> = process.env): Check[] {
  if (!secret) return [];
  const checks: Check[] = [];
  const seen = new Set<string>();
  for (const { path, setup } of clientConfigSetups(cwd, undefined, env)) {
    if (seen.has(path)) continue;
    seen.add(path);
    if (!readClientConfig(path)?.includes(secret)) continue;
    const args = ['setup', ...setup, ...(portArg ? portArg.trim().split(' ') : [])];
    checks.push({
      check: 'client config secret',
      status: 'warn',
      detail: `${path} holds the OpenTabs secret of ${secretPath(dir)}, which also answers approvals, changes settings and opens the extension's connection: an agent that reads its client's config gets all of that. MCP clients need only the client token`,
      fix: `\`${commandFor(dir, args)}\` writes the client token in its place.`,
    });
  }
  if (env[CODEX_SECRET_VAR] === secret) {
    checks.push({
      check: 'client config secret',
      status: 'warn',
      detail: `${CODEX_SECRET_VAR} in this environment (what Codex sends) is the OpenTabs secret of ${secretPath(dir)}, not the client token`,
      fix: `In your shell profile: export ${CODEX_SECRET_VAR}="$(${clientTokenCommand(dir)})"`,
    });
  }
  return checks;
}

/** Why a config dir that does not exist could not be made (a file in the way, a folder not writable), or null. */
function cannotCreate(dir: string): string | null {
  let at = dirname(dir);
  // The nearest part of the path that exists (bounded by the path's depth).
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  let st;
  try {
    st = statSync(at);
  } catch {
    return null;
  }
  if (!st.isDirectory()) return `${at} is a file, not a folder`;
  return writable(at) ? null : `you cannot write to ${at}`;
}

/** True when this process may create files in `dir`. */
function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A client config file's text; null when it is missing, not a regular file, unreadable or over CLIENT_CONFIG_MAX_BYTES. */
function readClientConfig(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile() || st.size > CLIENT_CONFIG_MAX_BYTES) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * MCP client config files that point a client at this config dir's server (its /mcp URL) with a
 * bearer secret that is not this config dir's: after \`opentabs config rotate-secret\`, or copied
 * from another config dir. The client is refused (401), which Claude Code shows as "Failed to
 * connect" and OpenCode as "needs authentication". One warning each, with how to update it.
 */
export function staleClientConfigChecks(secret: string | null, port: number, portArg = '', cwd = process.cwd(), token: string | null = null, dir?: string): Check[] {
  if (!secret) return [];
  const setups = new Map(clientConfigSetups(cwd).map((f) => [f.path, f.setup]));
  const checks: Check[] = [];
  const url = new RegExp(`//(?:127\\.0\\.0\\.1|localhost):${port}/mcp\\b`);
  for (const path of new Set(clientConfigFiles(cwd))) {
    const text = readClientConfig(path);
    if (text === null) continue;
    if (!url.test(text) || text.includes(secret) || (token && text.includes(token)) || !/Bearer [0-9a-f]{64}\b/.test(text)) continue;
    const setup = setups.get(path);
    const args = setup ? ['setup', ...setup, ...(portArg ? portArg.trim().split(' ') : [])] : null;
    const fix = args
      ? `\`${dir ? commandFor(dir, args) : `opentabs ${args.map(shellWord).join(' ')}`}\` writes the current client token into it.`
      : 'Replace its Authorization header with the one `opentabs start --show-config` prints.';
    checks.push({
      check: 'client config file',
      status: 'warn',
      detail: `${path} points a client at http://127.0.0.1:${port}/mcp with a token that is neither this config dir's client token nor its secret (they were rotated since, or the entry came from another config dir): the server refuses it`,
      fix,
    });
  }
  return checks;
}

/**
 * MCP client config files whose entry holds this config dir's client token (or secret) with a URL
 * of another port than the one its server runs on: written before the server moved (\`start
 * --port\`, kept by later starts), so the client finds nothing there ("Failed to connect"). One
 * warning each, with the \`opentabs setup\` that points it at the running server. A token is
 * paired with the URL nearest to it in the file (an entry holds both, a few lines apart).
 */
export function wrongPortClientConfigChecks(secret: string | null, token: string | null, port: number, portArg = '', cwd = process.cwd(), dir?: string): Check[] {
  const keys = [token, secret].filter((k): k is string => !!k);
  if (keys.length === 0) return [];
  const checks: Check[] = [];
  const seen = new Set<string>();
  for (const { path, setup } of clientConfigSetups(cwd)) {
    if (seen.has(path)) continue;
    seen.add(path);
    const text = readClientConfig(path);
    if (text === null) continue;
    const urls = [...text.matchAll(/\/\/(?:127\.0\.0\.1|localhost):(\d{1,5})\/mcp\b/g)].map((m) => ({ at: m.index, port: Number(m[1]) }));
    if (urls.length === 0) continue;
    const wrong = new Set<number>();
    for (const key of keys) {
      for (let at = text.indexOf(key); at !== -1; at = text.indexOf(key, at + key.length)) {
        const nearest = urls.reduce((a, b) => (Math.abs(b.at - at) < Math.abs(a.at - at) ? b : a));
        if (nearest.port !== port) wrong.add(nearest.port);
      }
    }
    if (wrong.size === 0) continue;
    const args = ['setup', ...setup, ...(portArg ? portArg.trim().split(' ') : [])];
    const ports = [...wrong].sort((a, b) => a - b).join(', ');
    checks.push({
      check: 'client config port',
      status: 'warn',
      detail: `${path} points a client at port ${ports} with this config dir's token, but the server runs on http://127.0.0.1:${port}: the client cannot connect`,
      fix: `\`${dir ? commandFor(dir, args) : `opentabs ${args.map(shellWord).join(' ')}`}\` points it at port ${port}.`,
    });
  }
  return checks;
}

/** The config.json settings a user may write by hand, with what the server accepts for each. */
const HAND_SETTINGS: { key: string; valid: (v: unknown) => boolean; expected: string; example: string }[] = [
  { key: 'skipPermissions', valid: (v) => typeof v === 'boolean', expected: 'true or false', example: 'false' },
  { key: 'allowFileUrls', valid: (v) => typeof v === 'boolean', expected: 'true or false', example: 'false' },
  { key: 'mcpSessionsPerMinute', valid: isSessionsPerMinute, expected: `a whole number 1–${MCP_SESSIONS_PER_MINUTE_MAX}`, example: '30' },
  {
    key: 'uploadFolders',
    valid: (v) => Array.isArray(v) && v.every((f) => typeof f === 'string' && isAbsolute(f)),
    expected: 'a list of absolute folder paths',
    example: '""',
  },
];

/**
 * config.json as the server reads it: a file that was not JSON is moved aside at start (the server
 * then runs on defaults, saying so only in server.log), and a hand-written setting with a value of
 * the wrong kind is ignored. Each says what happened and how to set it right.
 */
export function configFileChecks(dir: string): Check[] {
  const checks: Check[] = [];
  let aside: { name: string; at: number } | null = null;
  try {
    for (const name of readdirSync(dir)) {
      const m = /^config\.json\.corrupt-(\d+)$/.exec(name);
      if (m && (!aside || Number(m[1]) > aside.at)) aside = { name, at: Number(m[1]) };
    }
  } catch {
    return checks;
  }
  if (aside) {
    const path = join(dir, aside.name);
    checks.push({
      check: 'config file',
      status: 'warn',
      detail: `config.json was not valid JSON on ${new Date(aside.at).toISOString()}: the server moved it to ${path} and went on with the default settings (permissions, plugin settings, local plugins)`,
      fix: `Set again what you need from it (\`opentabs config set …\`), then delete it: \`rm ${shellWord(path)}\`.`,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readRegularFileSync(configPath(dir)));
  } catch {
    return checks;
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return checks;
  for (const s of HAND_SETTINGS) {
    if (!(s.key in raw)) continue;
    const value = (raw as Record<string, unknown>)[s.key];
    if (s.valid(value)) continue;
    checks.push({
      check: 'config file',
      status: 'warn',
      detail: `${s.key} in ${configPath(dir)} is ${printable(oneLine(JSON.stringify(value) ?? String(value), 80))}, not ${s.expected}: it is ignored`,
      fix: `Set it with the CLI, which checks the value, e.g. \`opentabs config set ${s.key} ${s.example}\`.`,
    });
  }
  return checks;
}

/** "12 s ago", "3 min ago": under a minute in seconds, not rounded up to "1 min". */
export function ago(ms: number): string {
  return ms < 60_000 ? `${Math.max(0, Math.round(ms / 1000))} s ago` : `${Math.round(ms / 60_000)} min ago`;
}

export async function runChecks(t: Target): Promise<Check[]> {
  const checks: Check[] = [];
  const dir = t.configDir;
  // The port the user asked about (flag, PORT, server.pid, or the one this config dir's server last
  // ran on), so the fixes start the server there.
  const owner = await probePort(t.port);
  const pid = readPidFile(dir);
  // An OpenTabs server on the port that this config dir's server.pid does not name: another config
  // dir's. A start here would be refused, so the fixes start this config dir's server on the next
  // port. `foreign`: this config dir has no secret yet, so it cannot be its server at all.
  const ours = pid !== null && pid.port === t.port && isAlive(pid.pid);
  const foreign = owner.kind === 'opentabs' && secretFor(dir) === null;
  // Another program on the port likewise: every fix that starts the server names the port the
  // port-owner check names, not the taken one.
  const portArgs = foreign || (owner.kind === 'opentabs' && !ours) || owner.kind === 'other'
    ? ` --port ${(await freePortAfter(t.port)) ?? 0}`
    : t.portSource === 'default' || (t.portSource === 'last' && t.port === DEFAULT_PORT)
      ? ''
      : ` --port ${t.port}`;

  const blocked = !existsSync(dir) ? cannotCreate(dir) : null;
  // A config dir this user cannot read hides the secret, server.pid and the extension folder: the
  // checks of those say so instead of calling them missing (a start would not make them).
  const unreadable = unreadableConfigDir(dir);
  const hidden = unreadable ? `it is in ${dir}, which you cannot read` : '';
  const hiddenFix = 'Make the config dir readable first (the config dir check above).';
  if (blocked) {
    checks.push({ check: 'config dir', status: 'fail', detail: `${dir} cannot be created: ${blocked}`, fix: 'Set OPENTABS_CONFIG_DIR to a folder you can write.' });
  } else if (!existsSync(dir)) {
    checks.push({ check: 'config dir', status: 'fail', detail: `${dir} does not exist yet`, fix: `Run \`opentabs start${portArgs}\` once; it creates the config dir, the secret and the extension folder.` });
  } else {
    const st = statSync(dir);
    const mode = st.mode & 0o777;
    const uid = process.getuid?.();
    if (unreadable) {
      checks.push({ check: 'config dir', status: 'fail', detail: unreadable.why, fix: unreadable.fix });
    } else if (!writable(dir)) {
      // start, config set and plugin add would all be refused: say so here, not as the secret's or the server's problem.
      const other = uid !== undefined && uid !== 0 && st.uid !== uid;
      checks.push({
        check: 'config dir',
        status: 'fail',
        detail: other ? `${dir} belongs to another user (uid ${st.uid}) and you cannot write to it` : `you cannot write to ${dir} (mode ${mode.toString(8)})`,
        fix: other ? 'Set OPENTABS_CONFIG_DIR to a folder of yours.' : `\`chmod 700 ${shellWord(dir)}\`, or set OPENTABS_CONFIG_DIR to a folder you can write.`,
      });
    } else {
      checks.push(
        mode & 0o077
          ? { check: 'config dir', status: 'warn', detail: `${dir} is readable by other users (mode ${mode.toString(8)})`, fix: `chmod 700 ${shellWord(dir)}` }
          : { check: 'config dir', status: 'ok', detail: dir },
      );
    }
  }

  const sp = secretPath(dir);
  if (unreadable) {
    checks.push({ check: 'secret', status: 'fail', detail: `${sp} cannot be read: ${hidden}`, fix: hiddenFix });
  } else if (!existsSync(sp)) {
    checks.push({ check: 'secret', status: 'fail', detail: `${sp} is missing`, fix: `Run \`opentabs start${portArgs}\`; it creates the secret.` });
  } else {
    const mode = statSync(sp).mode & 0o777;
    if (readSecretSync(dir) === null) {
      checks.push({ check: 'secret', status: 'fail', detail: `${sp} does not hold a valid secret ({"secret": "<64 hex>"})`, fix: 'Run `opentabs config rotate-secret` to write a new one.' });
    } else if (mode !== 0o600) {
      checks.push({
        check: 'secret file mode',
        status: 'fail',
        detail: `${sp} has mode ${mode.toString(8).padStart(4, '0')}; it must be 0600 so only you can read the secret`,
        fix: `chmod 600 ${shellWord(sp)}  (and consider \`opentabs config rotate-secret\` if others could have read it)`,
      });
    } else {
      checks.push({ check: 'secret', status: 'ok', detail: `${sp} (mode 0600)` });
    }
  }

  checks.push(...configFileChecks(dir));
  const clientToken = readClientTokenSync(dir);
  checks.push(...clientConfigChecks(readSecretSync(dir), process.cwd(), clientToken));
  // setup finds the port as doctor did, unless it came from --port or PORT.
  const setupPortArg = t.portSource === 'flag' || t.portSource === 'env' ? ` --port ${t.port}` : '';
  checks.push(...clientSecretChecks(dir, readSecretSync(dir), setupPortArg));
  checks.push(...staleClientConfigChecks(readSecretSync(dir), t.port, setupPortArg, process.cwd(), clientToken, dir));

  if (pid && !isAlive(pid.pid)) {
    checks.push({ check: 'pid file', status: 'warn', detail: `${join(dir, 'server.pid')} names pid ${pid.pid}, which is not running (the server did not shut down cleanly)`, fix: '`opentabs stop` removes the stale file.' });
  }

  let health: HealthPayload | null = null;
  if (owner.kind === 'free' && pid && pid.port > 0 && pid.port !== t.port && isAlive(pid.pid)) {
    // --port or PORT names another port than this config dir's running server: starting one there would be refused.
    checks.push({ check: 'server', status: 'fail', detail: `nothing is listening on ${t.url}; this config dir's server runs on http://127.0.0.1:${pid.port} (pid ${pid.pid})`, fix: `${t.portSource === 'env' ? 'Unset PORT' : 'Leave out --port'}, or use \`opentabs doctor --port ${pid.port}\`.` });
  } else if (unreadable && owner.kind !== 'other') {
    // server.pid and the secret are in the unreadable folder: this config dir's server may run on
    // another port, and a server on this one cannot be told apart from another config dir's.
    const detail = owner.kind === 'free'
      ? `nothing is listening on ${t.url}, and where this config dir's server runs (its server.pid) cannot be read: ${hidden}`
      : `an OpenTabs server answers on ${t.url}, and whether it is this config dir's (its secret) cannot be read: ${hidden}`;
    checks.push({ check: 'server', status: 'fail', detail, fix: hiddenFix });
  } else if (owner.kind === 'free') {
    checks.push({ check: 'server', status: 'fail', detail: `nothing is listening on ${t.url}`, fix: `Run \`opentabs start${portArgs}\` (or \`opentabs start --background${portArgs}\`).` });
  } else if (owner.kind === 'other') {
    checks.push({
      check: 'port owner',
      status: 'fail',
      detail: `port ${t.port} is held by another program: ${owner.detail}; ${describePortHolder(t.port)}`,
      fix: await insteadOf(t.port),
    });
  } else if (foreign) {
    checks.push({ check: 'server', status: 'fail', detail: noSecret(t).detail, fix: await otherServerFix(t) });
  } else {
    try {
      health = (await api<HealthPayload>(t, 'GET', '/health', { timeoutMs: 5000 })).body;
      checks.push({ check: 'server', status: 'ok', detail: `running on ${t.url} (v${health.version ?? '?'}, ${health.mode ?? '?'} mode)` });
      // An update (git pull, npm install) while it ran: it still runs the code it loaded, as start says.
      const changed = ours && typeof pid?.startedAt === 'number' ? changedSince(pid.startedAt) : null;
      if (changed) {
        checks.push({
          check: 'server code',
          status: 'warn',
          detail: `the server started before ${changed} changed, and runs the code it loaded then`,
          fix: `Restart it to run this version: \`opentabs stop && opentabs start${portArgs}\`.`,
        });
      }
    } catch (e) {
      // This config dir's own server on the port (server.pid) with another secret: restarting it
      // helps. Any other process: a start on this port would be refused, so name another port.
      const fix = ours
        ? `Make sure OPENTABS_CONFIG_DIR matches the running server, or restart it: \`opentabs stop && opentabs start${portArgs}\`.`
        : await otherServerFix(t);
      checks.push({ check: 'server auth', status: 'fail', detail: (e as CliError).message, fix });
    }
  }

  const manifest = join(dir, 'extension', 'manifest.json');
  if (unreadable) {
    checks.push({ check: 'extension folder', status: 'fail', detail: `${join(dir, 'extension')} cannot be read: ${hidden}`, fix: hiddenFix });
  } else if (!existsSync(manifest)) {
    checks.push({ check: 'extension folder', status: 'fail', detail: `${join(dir, 'extension')} has no manifest.json (extension not installed)`, fix: `Run \`opentabs start${portArgs}\`; it installs the extension folder.` });
  } else {
    checks.push({ check: 'extension folder', status: 'ok', detail: join(dir, 'extension') });
  }

  if (health) {
    const reloadPending = !health.extensionConnected && pid ? extensionReloadPending(dir, pid.pid) : null;
    checks.push(...wrongPortClientConfigChecks(readSecretSync(dir), clientToken, t.port, setupPortArg, process.cwd(), dir));
    if (health.extensionConnected && health.otherBrowser?.waiting) {
      checks.push({
        check: 'extension',
        status: 'warn',
        detail: `connected to the server; ${OTHER_BROWSER_WAITS}`,
        fix: 'Keep the extension on in the browser the agent should use (one Chrome profile), and turn it off in the others.',
      });
    } else if (health.extensionConnected) {
      checks.push({ check: 'extension', status: 'ok', detail: 'connected to the server' });
    } else if (reloadPending) {
      checks.push({
        check: 'extension',
        status: 'fail',
        detail: `the Chrome extension is not connected: the server told it to reload after an update (${reloadPending}) and it has not connected since`,
        fix: 'In chrome://extensions: turn on Developer mode (Chrome leaves an unpacked extension off after a reload without it), make sure OpenTabs is on, and click its reload button.',
      });
    } else {
      checks.push({
        check: 'extension',
        status: 'fail',
        detail: 'the Chrome extension is not connected',
        fix: `In Chrome: chrome://extensions → turn on Developer mode → Load unpacked → ${join(dir, 'extension')}. If it is loaded already, click its reload button; it connects within a few seconds.`,
      });
    }
    for (const f of health.failedPlugins ?? []) {
      checks.push({
        check: `plugin ${f.name ?? f.path}`,
        status: 'fail',
        detail: `failed to load from ${f.path}: ${f.error}`,
        fix: `Rebuild it (\`opentabs plugin build ${f.path}\`) or remove it (\`opentabs plugin remove ${f.name ?? f.path}\`).`,
      });
    }
    if ((health.failedPlugins ?? []).length === 0) checks.push({ check: 'plugins', status: 'ok', detail: `${health.plugins ?? 0} loaded, none failed` });
    // Counted as `opentabs status` counts them: sessions in use apart from idle ones exited clients left.
    checks.push({ check: 'MCP clients', status: 'ok', detail: mcpClientsText(health) });
    // A client the session limit refused shows only "failed to connect" (Claude Code, OpenCode).
    const refused = health.mcpSessionsRefused;
    if (refused && refused.count > 0 && refused.lastAt !== null && Date.now() - refused.lastAt < RECENT_REFUSAL_MS) {
      // A value above the limit in force now (it may have been raised since those refusals).
      const raised = Math.min(MCP_SESSIONS_PER_MINUTE_MAX, Math.max(30, refused.perMinute * 2));
      checks.push({
        check: 'MCP sessions',
        status: 'warn',
        detail: `${refused.count} new MCP session${refused.count === 1 ? '' : 's'} refused since the server started, the last ${ago(Date.now() - refused.lastAt)}; the limit is now ${refused.perMinute} per minute (a client that retries, or each \`claude mcp list\` / \`opencode mcp list\`, opens new ones)`,
        fix:
          raised > refused.perMinute
            ? `Raise the limit: \`opentabs config set mcpSessionsPerMinute ${raised}\` (applies to the next new session), or wait a minute.`
            : 'Wait a minute: the limit is at its highest.',
      });
    }
  }

  if (!isCompiled()) {
    const stale = bundleStaleReason();
    checks.push(
      stale === null
        ? { check: 'start-up bundle', status: 'ok', detail: 'fresh (opentabs start loads the server precompiled)' }
        : {
            check: 'start-up bundle',
            status: 'warn',
            detail: `${stale}: opentabs start runs the server from source, which works the same and starts ≈ 50 ms slower`,
            fix: `Rebuild it: \`${SERVER_BUNDLE_BUILD_COMMAND}\`.`,
          },
    );
  }

  const browsers = findBrowsers();
  checks.push(
    browsers.length > 0
      ? { check: 'browser', status: 'ok', detail: `Chromium-based browser found: ${browsers[0]}` }
      : {
          check: 'browser',
          status: 'fail',
          detail: 'no Chromium-based browser (Chrome, Chromium, Brave, Edge) found on PATH or in the usual places',
          fix: 'Install Google Chrome (https://www.google.com/chrome/) or Chromium (Debian/Ubuntu: `sudo apt-get install chromium`; Fedora: `sudo dnf install chromium`; macOS: `brew install --cask chromium`); the OpenTabs extension needs a Chromium-based browser.',
        },
  );
  return checks;
}

export const command: Command = {
  name: 'doctor',
  summary: 'Doctor',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'doctor');
    if (values.help) return (say(HELP), 0);
    if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'doctor');
    const t = resolveTarget(values.port, 'doctor');
    const checks = await runChecks(t);
    const failed = checks.filter((x) => x.status === 'fail').length;
    if (values.json) {
      printJson(checks.map((ch) => (ch.fix ? { ...ch, fix: runnableCommands(ch.fix) } : ch)));
    } else {
      for (const ch of checks) {
        const mark = ch.status === 'ok' ? c.green('✓') : ch.status === 'warn' ? c.yellow('!') : c.red('✗');
        say(`${mark} ${c.bold(ch.check)}: ${ch.detail}`);
        if (ch.fix) say(`    fix: ${ch.fix}`);
      }
      const warns = checks.filter((x) => x.status === 'warn').length;
      say('');
      say(failed === 0 ? c.green(`All checks passed${warns ? ` (${warns} warning${warns === 1 ? '' : 's'})` : ''}.`) : c.red(`${failed} problem${failed === 1 ? '' : 's'} found.`));
    }
    return failed === 0 ? 0 : 1;
  },
};
