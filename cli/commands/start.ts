/**
 * `opentabs start`: detect a server already on the port, else start one in the foreground (or a
 * detached one with --background), install the extension folder, and on first run print the
 * MCP client configuration.
 */
import { constants, existsSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { readRegularFileBytesSync, readRegularFileSync } from '../../server/protocol/regular-file.ts';
import { join } from 'node:path';
import { DEFAULT_PORT, HOST } from '../../server/limits.ts';
import { parse, parsePort } from '../args.ts';
import type { Command } from '../command.ts';
import type { EmbeddedFile } from '../embedded-extension.ts';
import { CliError, c, err, out, say } from '../output.ts';
import { isCompiled, selfSpawnCommand } from '../self.ts';
import { withServerEnv } from '../server-env.ts';
import { describePortHolder, findPortHolder, insteadOf, stopCommandFor } from '../port-holder.ts';
import { checkConfigServer, checkServer, configDir, isAlive, lastPort, probePort, readPidFile, secretFor, clientTokenFor } from '../server-client.ts';
import { changedSince } from '../install-changed.ts';

const HELP = `Usage: opentabs start [--port N] [--dev] [--background] [--show-config]

Start the OpenTabs server on 127.0.0.1 (MCP at /mcp and /mcp/gateway, REST at /tools, the
extension's WebSocket at /ws) and install the extension folder into <config dir>/extension.
If this config dir's server already answers on the port, says so and exits 0 (with --dev: exit 1
when it runs without dev mode, naming the restart); a port held by another program or by the
server of another config dir is refused (exit 1).

Options:
  --port N        Port to listen on (default: PORT env, then the port this config dir's server
                  last ran on, then ${DEFAULT_PORT}; 0 picks a free port)
  --dev           Dev mode: watch local plugins and hot-reload them on rebuild
  --background    Start detached; wait until /health answers; logs go to <config dir>/server.log
  --show-config   Print the MCP client configuration in full (a shorter form is printed
                  unasked until start has shown it once for this config dir)
  -h, --help      Show this help

Environment: OPENTABS_CONFIG_DIR (default ~/.opentabs), PORT,
OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS=1 (treat every 'ask' tool as 'auto').`;

/**
 * The MCP client configuration text, loaded only when printed (first run or --show-config). The
 * first run's banner is the shorter form; --show-config prints every block.
 */
async function mcpConfig(url: string, token: string, dir: string, full = true): Promise<string> {
  const text = (await import('../mcp-config.ts')).renderMcpConfig(url, token, dir, full);
  markConfigShown(dir);
  return text;
}

/**
 * `<config dir>/mcp-config-shown`: written once `start` has printed the MCP client configuration.
 * Until it exists, `start` prints it unasked. "First run" is not "no auth.json yet": the secret is
 * also created by `opentabs config rotate-secret` and by a server the stdio bridge (`opentabs mcp`)
 * started, and neither shows the configuration.
 */
const CONFIG_SHOWN = 'mcp-config-shown';
/**
 * Set by a caller that starts the server where nobody reads its output (the stdio bridge's
 * autostart): the unasked configuration is then neither printed nor marked as shown.
 */
export const NO_BANNER_ENV = 'OPENTABS_START_NO_BANNER';

/**
 * `<config dir>/mcp-config-pending`: written by a start whose output nobody reads (the stdio
 * bridge's autostart) in a config dir where no server has run yet, so that the configuration is
 * still printed by the next `start` although a server has run here by then (see configShown).
 */
const CONFIG_PENDING = 'mcp-config-pending';

/**
 * Whether `start` has already shown the MCP client configuration for this config dir. Versions
 * before the marker printed it on the start that created the secret and wrote no marker: a config
 * dir where a server has run (extension/server.json, written by every server start) with neither
 * file is one of theirs, and is marked as shown here so that an upgrade does not print it again.
 */
function configShown(dir: string, noBanner: boolean): boolean {
  if (existsSync(join(dir, CONFIG_SHOWN))) return true;
  if (existsSync(join(dir, CONFIG_PENDING))) return false;
  if (existsSync(join(dir, 'extension', 'server.json'))) {
    createMarker(dir, CONFIG_SHOWN, 'The MCP client configuration was printed by an earlier version of `opentabs start`.');
    return true;
  }
  if (noBanner) {
    // The bridge may be the first thing run with this config dir: the folder does not exist yet.
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {}
    createMarker(dir, CONFIG_PENDING, 'A server was started here by the stdio bridge: `opentabs start` has not printed the MCP client configuration yet.');
  }
  return false;
}

function markConfigShown(dir: string): void {
  createMarker(dir, CONFIG_SHOWN, `The MCP client configuration was printed by \`opentabs start\` on ${new Date().toISOString()}.`);
  try {
    rmSync(join(dir, CONFIG_PENDING), { force: true });
  } catch {}
}

function createMarker(dir: string, name: string, text: string): void {
  try {
    // Created, never opened through an existing name: a link planted there is not followed (and
    // its target not truncated); it only means the configuration shows again next time.
    const fd = openSync(join(dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, `${text}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Already there, or the config dir does not exist yet or is not writable.
  }
}

/** How long --background waits for the child's /health. Generous: the machine may be busy. */
const BACKGROUND_START_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
/** How long a start that lost the port to a second start of this config dir waits for it to answer. */
const RACE_WAIT_MS = 15_000;
/** Set in the environment of the detached server that `start --background` spawns. */
const BACKGROUND_CHILD_ENV = 'OPENTABS_BACKGROUND_CHILD';

export const command: Command = {
  name: 'start',
  summary: 'Start the server',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      { port: { type: 'string' }, dev: { type: 'boolean' }, background: { type: 'boolean' }, 'show-config': { type: 'boolean' } },
      'start',
    );
    if (values.help) {
      say(HELP);
      return 0;
    }
    if (positionals.length > 0) throw new CliError(`Unexpected argument "${positionals[0]}". Run \`opentabs start --help\`.`, 2);
    const dir = configDir();
    // Without --port or PORT: the port this config dir's server last ran on, where the MCP client
    // configs printed then point (and where status, doctor and the stdio bridge look), else 9515.
    const port =
      values.port !== undefined
        ? parsePort(values.port, '--port', true, 'start')
        : process.env.PORT
          ? parsePort(process.env.PORT, 'the PORT environment variable', true, 'start')
          : (lastPort(dir) ?? DEFAULT_PORT);
    const noBanner = process.env[NO_BANNER_ENV] === '1';
    const firstRun = !configShown(dir, noBanner) && !noBanner;
    const showConfig = Boolean(values['show-config']) || firstRun;

    // One server per config dir: a second one would fight the first over server.pid, the audit
    // log and the extension's connection. Found through server.pid, confirmed by the process on
    // its port proving it knows this config dir's secret: a pid outlives its process, and any
    // HTTP server can answer GET /health with {"status":"ok"}.
    const existing = readPidFile(dir);
    if (
      existing &&
      existing.port > 0 &&
      existing.port !== port &&
      isAlive(existing.pid) &&
      (await probePort(existing.port)).kind === 'opentabs' &&
      (await recordedServerIsOurs(dir, existing.pid, existing.port))
    ) {
      const url = `http://${HOST}:${existing.port}`;
      if (values.port === undefined && !process.env.PORT) {
        if (values.dev) await requireDevMode(dir, existing.port, secretFor(dir), `${url} (pid ${existing.pid})`);
        say(`OpenTabs server is already running on ${url} (pid ${existing.pid}).`);
        noteOlderServer(existing.startedAt, Boolean(values.background));
        // MCP clients get the client token, never the secret.
        const token = clientTokenFor(dir);
        if ((values['show-config'] || firstRun) && token) say(`\n${await mcpConfig(url, token, dir, Boolean(values['show-config']))}`);
        return 0;
      }
      throw new CliError(
        `OpenTabs is already running for config dir ${dir} on ${url} (pid ${existing.pid}). ` +
          (values.port === undefined ? `Port ${port} came from the PORT environment variable: unset it to use that server. ` : '') +
          `Stop it first (\`opentabs stop\`), or use another config dir (OPENTABS_CONFIG_DIR) for a second server.`,
      );
    }

    if (port !== 0) {
      const owner = await probePort(port);
      if (owner.kind === 'opentabs') {
        const secret = secretFor(dir);
        // Another config dir's server holds the port: commands run with this dir would all be refused (401).
        if (!(await acceptsSecret(dir, port))) {
          const holder = await portHolder(dir, port);
          throw new CliError(`Port ${port} is held by ${holder.text}. ${await insteadOf(port, !holder.stopNamed)}`);
        }
        const pidNote = existing && existing.port === port && isAlive(existing.pid) ? ` (pid ${existing.pid})` : '';
        if (values.dev) await requireDevMode(dir, port, secret, `http://${HOST}:${port}${pidNote}`);
        say(`OpenTabs server is already running on http://${HOST}:${port}${pidNote}.`);
        if (pidNote) noteOlderServer(existing?.startedAt, Boolean(values.background));
        const token = clientTokenFor(dir);
        if ((values['show-config'] || firstRun) && token) say(`\n${await mcpConfig(`http://${HOST}:${port}`, token, dir, Boolean(values['show-config']))}`);
        return 0;
      }
      if (owner.kind === 'other') {
        if (await startedMeanwhile(dir, port)) return 0;
        throw new CliError(
          `Port ${port} is in use by another program (${owner.detail}), not an OpenTabs server: ${describePortHolder(port)}` +
            `${values.port === undefined && process.env.PORT ? `; port ${port} came from the PORT environment variable` : ''}. ` +
            (await insteadOf(port)),
        );
      }
    }

    const fullConfig = Boolean(values['show-config']);
    if (values.background) return startBackground(dir, port, Boolean(values.dev), showConfig, fullConfig);
    // A background child's stdout is server.log, which must never hold the secret: the parent prints the config.
    return startForeground(dir, port, Boolean(values.dev), showConfig && process.env[BACKGROUND_CHILD_ENV] !== '1', fullConfig);
  },
};

/**
 * The extension embedded in the single-file executable, if any. The compile entry registers it on
 * this global (cli/embedded-extension.ts) before the CLI runs; it is looked up here without
 * importing that module, whose imports load the extension build and esbuild's JS API (≈ 20–30 ms
 * before the server could start), which a start from a checkout or an npm install never needs.
 */
async function embeddedExtensionFiles(): Promise<EmbeddedFile[] | null> {
  const files = (globalThis as Record<string, unknown>).__OPENTABS_EMBEDDED_EXTENSION__;
  if (!Array.isArray(files) || files.length === 0) return null;
  return (await import('../embedded-extension.ts')).embeddedExtension();
}

async function startForeground(dir: string, port: number, dev: boolean, showConfig: boolean, fullConfig: boolean): Promise<number> {
  // From the start-up bundle, this is the bundle's own copy of the server (cli/main.ts chose it).
  const { runForeground } = await import('../../server/serve.ts');
  const embedded = await embeddedExtensionFiles();
  const installedBefore = installHash(dir);
  const asideBefore = configsSetAside(dir);
  let running;
  try {
    running = await runForeground({ port, configDir: dir, dev, quiet: true, installExtension: embedded ? false : undefined });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || /EADDRINUSE|address already in use|in use/i.test(String((e as Error).message))) {
      if (await startedMeanwhile(dir, port)) return 0;
      throw new CliError(`Port ${port} is already in use (another program took it just now): ${describePortHolder(port)}. ${await insteadOf(port)}`);
    }
    throw new CliError(`The server failed to start: ${(e as Error).message}`);
  }
  warnConfigSetAside(dir, asideBefore);
  if (embedded) {
    try {
      const { installEmbeddedExtension } = await import('../embedded-extension.ts');
      await installEmbeddedExtension(embedded, dir, running.port);
    } catch (e) {
      err(`warning: installing the embedded extension failed: ${(e as Error).message}`);
    }
  }
  // The extension folder is installed after the bind (listen first); say so if that failed.
  const started = running;
  void running.ready.then(() => {
    if (!existsSync(join(dir, 'extension', 'manifest.json'))) {
      err(`warning: the extension folder ${join(dir, 'extension')} was not installed; see ${join(dir, 'server.log')} (extension_install_failed).`);
    } else if (installedBefore !== null && installHash(dir) !== installedBefore) {
      reloadUpdatedExtension(dir, started);
    }
    // The parent (`start --background`) reads server.log up to this line and shows the user what came before it.
    if (process.env[BACKGROUND_CHILD_ENV] === '1') say(`${EXTENSION_CHECKED} ${join(dir, 'extension')}`);
  });
  say(`OpenTabs server listening on ${running.url}${dev ? ' (dev mode: watching local plugins)' : ''}`);
  // A background child's stdout is server.log: no terminal to press Ctrl-C in.
  const stopWith = process.env[BACKGROUND_CHILD_ENV] === '1' ? 'Stop with' : 'Stop with Ctrl-C or';
  say(c.dim(`Config dir: ${dir}  ·  Extension folder: ${join(dir, 'extension')}  ·  ${stopWith} \`opentabs stop\``));
  if (showConfig) {
    const token = running.ctx.clientToken ?? clientTokenFor(dir) ?? '<client token>';
    say(`\n${await mcpConfig(running.url, token, dir, fullConfig)}`);
  }
  // Run until the server stops (serve.ts stops it on SIGINT/SIGTERM, then exits). Waiting here
  // rather than returning keeps the entry module (cli/main.ts) evaluating for the server's life:
  // Bun runs a full garbage collection once the entry module has finished, and that collection
  // landed between the bind and the first answers (≈ 5–9 ms with 2,000 plugin tools). The memory
  // keeper (server/state/memory.ts) collects and returns start-up garbage after the first quiet
  // spell instead.
  await running.stopped;
  return 0;
}

/**
 * The content hash of the extension copy installed in the config dir (`.install-hash`, written by
 * server/extension-files.ts), or null when none is installed.
 */
function installHash(dir: string): string | null {
  try {
    return readRegularFileSync(join(dir, 'extension', '.install-hash')).trim() || null;
  } catch {
    return null;
  }
}

/** The config.json copies the server set aside because they were not JSON (config.json.corrupt-<time>). */
function configsSetAside(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => /^config\.json\.corrupt-\d+$/.test(n));
  } catch {
    return [];
  }
}

/** Say so when this start found config.json unreadable (the server then runs on default settings). */
function warnConfigSetAside(dir: string, before: string[]): void {
  const added = configsSetAside(dir).filter((n) => !before.includes(n));
  if (added.length === 0) return;
  err(
    `warning: ${join(dir, 'config.json')} was not valid JSON: it was moved to ${join(dir, added[added.length - 1]!)} and the server ` +
      'runs on the default settings (permissions, plugin settings, local plugins); `opentabs doctor` says how to set them again.',
  );
}

/**
 * The line a background server writes to server.log once the extension folder is installed (or
 * found up to date); what it said about the extension before it is shown by `start --background`.
 */
const EXTENSION_CHECKED = 'Extension folder checked:';
/** How long `start --background` waits for that line after the server answers. */
const EXTENSION_CHECK_WAIT_MS = 30_000;

/**
 * After a background start: the lines the server wrote to server.log about the extension folder
 * (updated, so it reloads itself; or not installed), which the user would otherwise never see.
 * Waits, bounded, for the server's EXTENSION_CHECKED line.
 */
async function relayExtensionNotes(logPath: string, from: number, pid: number): Promise<void> {
  const deadline = Date.now() + EXTENSION_CHECK_WAIT_MS;
  let text = '';
  for (;;) {
    try {
      // `from` is a byte offset (the log's size before the spawn).
      text = readRegularFileBytesSync(logPath).subarray(from).toString('utf8');
    } catch {
      return;
    }
    if (text.includes(EXTENSION_CHECKED) || Date.now() > deadline || !isAlive(pid)) break;
    await Bun.sleep(POLL_MS);
  }
  for (const line of text.split('\n')) {
    if (line.startsWith('The extension in ') && line.includes(' was updated:')) say(line);
    else if (line.startsWith('warning: the extension folder ')) err(line);
  }
}

/** How often an updated extension's first connection is looked for. */
const UPDATED_EXTENSION_POLL_MS = 500;

/**
 * This start installed a new copy of the extension over an older one (an upgrade, or extension
 * sources changed). Chrome keeps running the copy it loaded, while pages it opens from then on
 * (the side panel) come from the new files: the first time the extension connects, it is told to
 * reload itself, which loads the new copy (it then connects again).
 */
function reloadUpdatedExtension(dir: string, running: Awaited<ReturnType<typeof import('../../server/serve.ts').runForeground>>): void {
  say(
    `The extension in ${join(dir, 'extension')} was updated: it reloads itself when it next connects ` +
      '(or click its reload button in chrome://extensions).',
  );
  const hub = running.ctx.hub;
  const timer = setInterval(() => {
    if (!hub.connected) return;
    clearInterval(timer);
    if (hub.sendExtensionReload()) running.ctx.log.info('extension_reload_after_update', {});
  }, UPDATED_EXTENSION_POLL_MS);
  void running.stopped.then(() => clearInterval(timer));
}

async function startBackground(dir: string, port: number, dev: boolean, showConfig: boolean, fullConfig: boolean): Promise<number> {
  const { ensureStateDirs } = await import('../../server/state/paths.ts');
  await ensureStateDirs(dir);
  const asideBefore = configsSetAside(dir);
  const logPath = join(dir, 'server.log');
  const { openLogForAppend } = await import('../../server/state/log-file.ts');
  let fd: number;
  try {
    fd = openLogForAppend(logPath);
  } catch (e) {
    // A folder at server.log: its message names the file and says to remove it.
    if ((e as { code?: unknown })?.code === 'ENOTREG') throw new CliError((e as Error).message);
    throw e;
  }
  const before = fstatSync(fd).size;
  const [cmd, ...args] = selfSpawnCommand();
  let child;
  try {
    child = (await import('node:child_process')).spawn(cmd, [...args, 'start', '--port', String(port), ...(dev ? ['--dev'] : [])], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...withServerEnv(process.env), OPENTABS_CONFIG_DIR: dir, NO_COLOR: '1', [BACKGROUND_CHILD_ENV]: '1' },
    });
  } finally {
    closeSync(fd);
  }
  let exited: number | null = null;
  child.once('exit', (code) => (exited = code ?? 1));
  child.unref();

  const deadline = Date.now() + BACKGROUND_START_TIMEOUT_MS;
  let boundPort = 0;
  while (Date.now() < deadline) {
    if (exited !== null) break;
    const pid = readPidFile(dir);
    if (pid && pid.pid === child.pid && pid.port > 0) {
      boundPort = pid.port;
      const owner = await probePort(boundPort, 1000);
      if (owner.kind === 'opentabs') break;
    }
    await Bun.sleep(POLL_MS);
  }
  if (exited !== null || boundPort === 0 || !child.pid || !isAlive(child.pid)) {
    if (exited !== null && (await startedMeanwhile(dir, port))) return 0;
    const tail = readLogTail(logPath, before);
    throw new CliError(
      `The background server did not start${exited !== null ? ` (exited with code ${exited})` : ' in time'}. ` +
        `Log (${logPath}):\n${tail || '(empty)'}`,
    );
  }
  // Confirm health once more (the loop may have ended on the deadline).
  if ((await probePort(boundPort, 2000)).kind !== 'opentabs') {
    try {
      process.kill(child.pid, 'SIGTERM');
    } catch {}
    throw new CliError(`The background server did not answer /health within ${BACKGROUND_START_TIMEOUT_MS / 1000}s; stopped it. See ${logPath}.`);
  }
  const url = `http://${HOST}:${boundPort}`;
  say(`OpenTabs server started in the background on ${url} (pid ${child.pid}).`);
  // Not for the stdio bridge's autostart: nobody reads that output, and its client is waiting.
  if (process.env[NO_BANNER_ENV] !== '1') await relayExtensionNotes(logPath, before, child.pid);
  warnConfigSetAside(dir, asideBefore);
  say(c.dim(`Logs: ${logPath}  ·  Stop with \`opentabs stop\``));
  if (showConfig) {
    const token = clientTokenFor(dir) ?? '<client token>';
    say(`\n${await mcpConfig(url, token, dir, fullConfig)}`);
  }
  return 0;
}

/**
 * `start --dev` while this config dir's server already runs without dev mode: it does not watch
 * local plugins, so say so (exit 1) and how to restart it in dev mode, rather than "already running".
 */
async function requireDevMode(dir: string, port: number, secret: string | null, where: string): Promise<void> {
  let mode: unknown;
  // The secret goes only to a process that proved it knows it (cli/server-client.ts).
  if (secret && (await checkServer({ configDir: dir, port, url: `http://${HOST}:${port}`, portSource: 'flag' }, secret)).kind !== 'verified') return;
  try {
    const res = await fetch(`http://${HOST}:${port}/health`, { headers: secret ? { authorization: `Bearer ${secret}` } : {}, signal: AbortSignal.timeout(5000) });
    mode = ((await res.json()) as { mode?: unknown }).mode;
  } catch {
    return;
  }
  if (mode === undefined || mode === 'dev') return;
  throw new CliError(
    `OpenTabs server is already running on ${where}, in ${String(mode)} mode, not dev mode: it does not watch local plugins. ` +
      `Restart it in dev mode: \`opentabs stop && opentabs start --dev${port === DEFAULT_PORT ? '' : ` --port ${port}`}\`.` +
      ' (`npm run dev` in a plugin folder loads each build into a running server in any mode.)',
  );
}

/**
 * The running server started before this install's files changed (an update: `git pull`,
 * `npm install`, a new binary): it still runs the code it loaded. Says so, with the restart.
 */
function noteOlderServer(startedAt: unknown, background: boolean): void {
  if (typeof startedAt !== 'number') return;
  const changed = changedSince(startedAt);
  if (changed === null) return;
  say(`It started before ${changed} changed, and runs the code it loaded then: restart it to run this version (\`opentabs stop && opentabs start${background ? ' --background' : ''}\`).`);
}

/**
 * The port was free when checked, then taken before this start could bind it: by a second
 * `opentabs start` of this config dir run at the same moment (two terminals, two clients' bridges)
 * when the process there proves it knows this config dir's secret. Says so (true), as when the
 * server was found running; else false (another program took it).
 */
async function startedMeanwhile(dir: string, port: number): Promise<boolean> {
  if (port === 0) return false;
  // A server that has just bound the port may not answer yet (a busy machine): wait while this
  // config dir's server.pid names a live process on that port.
  const deadline = Date.now() + RACE_WAIT_MS;
  for (;;) {
    const owner = await probePort(port);
    if (owner.kind === 'opentabs') {
      if (!(await acceptsSecret(dir, port))) return false;
      break;
    }
    const pid = readPidFile(dir);
    if (owner.kind === 'free' || !pid || pid.port !== port || !isAlive(pid.pid) || Date.now() > deadline) return false;
    await Bun.sleep(POLL_MS);
  }
  say(`OpenTabs server is already running on http://${HOST}:${port} (another start, run at the same moment, started it).`);
  return true;
}

/**
 * Whether the process on the port proves it knows this config dir's secret (the extension's
 * handshake; the secret itself is not sent), or is too slow to tell. No secret yet: it cannot be
 * this dir's server.
 */
async function acceptsSecret(dir: string, port: number): Promise<boolean> {
  const r = await checkConfigServer(dir, port, 'flag', 2000);
  return r !== null && r.kind !== 'unverified';
}

/**
 * Whether the live process server.pid names, on its recorded port, is this config dir's server:
 * the process on that port proves it knows the secret (a server too busy to answer in time is
 * given the benefit of the doubt). When it cannot, server.pid is stale (the pid was reused, or
 * another program took the port): says what holds the port, and this start goes on without it.
 */
async function recordedServerIsOurs(dir: string, pid: number, port: number): Promise<boolean> {
  const r = await checkConfigServer(dir, port, 'pidfile');
  if (r && r.kind !== 'unverified') return true;
  err(
    `note: ${join(dir, 'server.pid')} names pid ${pid} on port ${port}, but the process on that port is not this config dir's ` +
      `OpenTabs server (${r?.kind === 'unverified' ? `it ${r.why}` : `there is no secret in ${join(dir, 'extension', 'auth.json')} to check it with`}): ` +
      'another program, or the server of another config dir. Starting this config dir\'s server.',
  );
  return false;
}

/**
 * What holds `port`, which answers GET /health like OpenTabs but did not prove it knows this
 * config dir's secret: the reason, and the pid when server.pid names a live one on that port.
 */
async function portHolder(dir: string, port: number): Promise<{ text: string; stopNamed: boolean }> {
  const r = await checkConfigServer(dir, port, 'flag');
  const why = r?.kind === 'unverified' ? `it ${r.why}` : r ? 'it did not answer the secret check' : `there is no secret in ${join(dir, 'extension', 'auth.json')} to check it with`;
  const pid = readPidFile(dir);
  const pidNote =
    pid && pid.port === port && isAlive(pid.pid) ? `; ${join(dir, 'server.pid')} names pid ${pid.pid} there, but that pid was reused or another program took the port` : '';
  const holder = findPortHolder(port);
  if (holder?.configDir && holder.configDir !== dir) {
    return {
      text:
        `pid ${holder.pid} (${holder.command}), the OpenTabs server of config dir ${holder.configDir}, not this config dir's (${dir}; ${why}${pidNote}). ` +
        `To stop that server: \`${stopCommandFor(holder.configDir)}\``,
      stopNamed: true,
    };
  }
  return {
    text:
      `a process that answers GET /health like OpenTabs but is not this config dir's server (${why}${pidNote}): ${describePortHolder(port)}; another program, ` +
      'or the OpenTabs server of another config dir (opentabs stop, run with that config dir in OPENTABS_CONFIG_DIR, stops it)',
    stopNamed: false,
  };
}

function readLogTail(path: string, from: number): string {
  try {
    const text = readRegularFileSync(path).slice(from);
    return text.split('\n').slice(-20).join('\n').trim();
  } catch {
    return '';
  }
}
