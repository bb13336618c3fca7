/**
 * How the CLI finds and talks to the running server: config dir, port (flag → PORT env →
 * server.pid → the port it last ran on → default), the bearer secret from the config dir, and a small JSON client that
 * turns HTTP error bodies into one clear CLI error.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readRegularFileSync } from '../server/protocol/regular-file.ts';
import { join } from 'node:path';
import { DEFAULT_PORT, HOST } from '../server/limits.ts';
import { resolveConfigDir } from '../server/state/paths.ts';
import { clientTokenPath, readClientTokenSync, readSecretSync } from '../server/state/secret.ts';
import { parsePort } from './args.ts';
import { CliError, literal } from './output.ts';
import { describePortHolder, findPortHolder, otherServerFix, stopCommandFor } from './port-holder.ts';
import { probePort, type Target } from './port-probe.ts';

export { probePort, type PortOwner, type Target } from './port-probe.ts';
import { shellWord } from './self.ts';
import { unreadableConfigDir } from './config-dir-access.ts';
import { CLIENT_NONCE_HEADER, checkServerProof, randomHex } from '../server/protocol/handshake.ts';
import type { FullHealth } from '../server/routes/health.ts';

export interface PidFile {
  pid: number;
  port: number;
  startedAt?: number;
}


export function configDir(): string {
  return resolveConfigDir();
}

export function readPidFile(dir: string): PidFile | null {
  const path = join(dir, 'server.pid');
  if (!existsSync(path)) return null;
  try {
    const raw = readRegularFileSync(path).trim();
    // Accept both the JSON form serve.ts writes and a bare pid.
    const parsed = raw.startsWith('{') ? JSON.parse(raw) : { pid: Number(raw), port: 0 };
    if (!Number.isInteger(parsed.pid) || parsed.pid <= 0) return null;
    return { pid: parsed.pid, port: Number(parsed.port) || 0, startedAt: parsed.startedAt };
  } catch {
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !isZombie(pid);
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A zombie (exited, not yet reaped by its parent) answers kill(pid, 0) but is gone (Linux /proc). */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/**
 * The port this config dir's server last listened on: the server writes it to extension/server.json
 * (where the extension looks for it) on every start, and it stays there after the server stops.
 */
export function lastPort(dir: string): number | null {
  try {
    const port = (JSON.parse(readRegularFileSync(join(dir, 'extension', 'server.json'))) as { port?: unknown }).port;
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65535 ? port : null;
  } catch {
    return null;
  }
}

/**
 * Which server a command talks to. The port of a live server.pid beats the default so
 * `opentabs start --port 0` followed by `opentabs status` just works. With no server running, the
 * port it last ran on (the one the extension and the printed MCP client configs name), so a hint
 * to start it starts it there.
 */
export function resolveTarget(portFlag: string | undefined, command: string): Target {
  const dir = configDir();
  let port: number;
  let portSource: Target['portSource'];
  if (portFlag !== undefined) {
    port = parsePort(portFlag, '--port', false, command);
    portSource = 'flag';
  } else if (process.env.PORT) {
    port = parsePort(process.env.PORT, 'the PORT environment variable', false, command);
    portSource = 'env';
  } else {
    const pid = readPidFile(dir);
    if (pid && pid.port > 0 && isAlive(pid.pid)) {
      port = pid.port;
      portSource = 'pidfile';
    } else {
      const last = lastPort(dir);
      port = last ?? DEFAULT_PORT;
      portSource = last === null ? 'default' : 'last';
    }
  }
  return { configDir: dir, port, url: `http://${HOST}:${port}`, portSource };
}

export function secretFor(dir: string): string | null {
  try {
    return readSecretSync(dir);
  } catch {
    return null;
  }
}

/** The client token of `dir` (client-token.json: what MCP client configs get), or null. */
export function clientTokenFor(dir: string): string | null {
  try {
    return readClientTokenSync(dir);
  } catch {
    return null;
  }
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
}

/**
 * When the target's port came from --port or PORT and this config dir's server runs on another
 * port: where it runs and how to reach it (a start on the asked port would be refused, one server
 * per config dir). Else null.
 */
export function elsewhereHint(t: Target): string | null {
  if (t.portSource !== 'flag' && t.portSource !== 'env') return null;
  const pid = readPidFile(t.configDir);
  if (!pid || pid.port <= 0 || pid.port === t.port || !isAlive(pid.pid)) return null;
  const drop = t.portSource === 'flag' ? 'leave out --port' : `unset PORT (it is ${t.port} in the environment)`;
  return `This config dir's server runs on http://${HOST}:${pid.port} (pid ${pid.pid}): ${drop}, or use \`--port ${pid.port}\`.`;
}

/** Nothing answers on the target's port: where this config dir's server runs instead, or how to start it. */
export function notRunningMessage(t: Target): string {
  const base = `OpenTabs server is not running on ${t.url}.`;
  const elsewhere = elsewhereHint(t);
  if (elsewhere) return `${base} ${elsewhere}`;
  // server.pid is in a folder this user cannot read: the server may run on another port, and a start would fail too.
  const unreadable = unreadableConfigDir(t.configDir);
  if (unreadable) return `${base} Where this config dir's server runs cannot be read: ${unreadable.why}. ${unreadable.fix}`;
  return `${base} Start it with \`opentabs start${t.port === DEFAULT_PORT ? '' : ` --port ${t.port}`}\`.`;
}

/** The error message from a standard error body, or a fallback naming the status. */
export function errorMessage(status: number, body: unknown): string {
  const e = (body as { error?: { code?: string; message?: string } } | null)?.error;
  if (e && typeof e.message === 'string') return e.code ? `${e.message} (${e.code})` : e.message;
  return `server answered HTTP ${status}`;
}

/** The process on the port could not prove it knows the secret: nothing carrying the secret was sent. */
export class ServerUnverifiedError extends CliError {}

export type ServerCheck = { kind: 'verified' } | { kind: 'unreachable' } | { kind: 'timeout' } | { kind: 'unverified'; why: string };

/**
 * Whether the process on the target's port is the OpenTabs server holding `secret`, by the same
 * handshake the extension runs (server/protocol/handshake.ts): GET /ws-info with a fresh client
 * nonce and no Authorization; the answer must carry HMAC(secret, serverProofMessage(clientNonce,
 * serverNonce)). Another user's process that took the port learns nothing from it.
 */
export async function checkServer(t: Target, secret: string, timeoutMs = 30_000): Promise<ServerCheck> {
  const clientNonce = randomHex(16);
  let res: Response;
  try {
    res = await fetch(`${t.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: clientNonce }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    return (e as Error).name === 'TimeoutError' ? { kind: 'timeout' } : { kind: 'unreachable' };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    return { kind: 'unverified', why: `answered GET /ws-info with HTTP ${res.status}, not a proof that it knows the secret` };
  }
  let answer: unknown;
  try {
    answer = await res.json();
  } catch {
    return { kind: 'unverified', why: 'answered GET /ws-info with something other than a proof that it knows the secret' };
  }
  const proof = await checkServerProof(secret, clientNonce, answer);
  if (!proof.ok) return { kind: 'unverified', why: proof.why };
  return { kind: 'verified' };
}

/** How long proving a server found on a port may take (a busy server still answers within it). */
export const SERVER_PROOF_TIMEOUT_MS = 5_000;

/**
 * checkServer against `dir`'s own secret for the process on `port` (start and stop asking whether
 * what holds a port is this config dir's server). Null when the dir has no secret yet: nothing on
 * any port can be shown to be its server.
 */
export async function checkConfigServer(
  dir: string,
  port: number,
  portSource: Target['portSource'],
  timeoutMs = SERVER_PROOF_TIMEOUT_MS,
): Promise<ServerCheck | null> {
  const secret = secretFor(dir);
  return secret ? checkServer({ configDir: dir, port, url: `http://${HOST}:${port}`, portSource }, secret, timeoutMs) : null;
}

export function unverifiedMessage(t: Target, why: string): string {
  const head = `The process on port ${t.port} is not this OpenTabs server: it ${why} in ${join(t.configDir, 'extension', 'auth.json')}, so the secret was not sent to it.`;
  const elsewhere = elsewhereHint(t);
  if (elsewhere) return `${head} ${elsewhere}`;
  const holder = findPortHolder(t.port);
  if (holder?.configDir && holder.configDir !== t.configDir) {
    return (
      `${head} It is pid ${holder.pid} (${holder.command}), the OpenTabs server of config dir ${holder.configDir}: to use it, ` +
      `put OPENTABS_CONFIG_DIR=${shellWord(holder.configDir)} in front of the command; to stop it: \`${stopCommandFor(holder.configDir)}\`.`
    );
  }
  return (
    `${head} It is ${describePortHolder(t.port)}. ` +
    `If it is an OpenTabs server of another config dir, run the command with that OPENTABS_CONFIG_DIR; otherwise stop it, ` +
    `or start this config dir's server on a port the system picks: \`opentabs start --port 0\` (later commands find it through server.pid).`
  );
}

/** Verified (url, secret) pairs of this process: one GET /ws-info each. */
const verified = new Map<string, Promise<ServerCheck>>();

/**
 * Throws unless the process on the target's port proves it knows `secret`: ServerUnverifiedError
 * for a wrong or missing proof, the not-running CliError when nothing answers. Call before any
 * request that carries the secret. Checked once per process and (url, secret) unless `fresh`.
 */
export async function requireVerifiedServer(t: Target, secret: string, opts: { fresh?: boolean } = {}): Promise<void> {
  const key = `${t.url}\n${secret}`;
  let check = opts.fresh ? undefined : verified.get(key);
  if (!check) {
    check = checkServer(t, secret);
    verified.set(key, check);
  }
  const r = await check;
  if (r.kind !== 'verified') verified.delete(key);
  if (r.kind === 'unreachable') throw new CliError(notRunningMessage(t));
  if (r.kind === 'timeout') throw new CliError(`The server on ${t.url} did not answer GET /ws-info in time.`);
  if (r.kind === 'unverified') throw new ServerUnverifiedError(unverifiedMessage(t, r.why));
}

/**
 * A fetch for long-lived MCP clients of the CLI (the stdio bridge, `logs --follow`): every request,
 * those the MCP client transport makes by itself included (its event stream reopened after the
 * server went away, about a second later), carries the client token of client-token.json, and only
 * after the process on the port has proved, right now, that it knows the secret (GET /ws-info with
 * a fresh client nonce: the secret itself is never sent). The server may have stopped since the
 * last request and another process taken the port; a request that cannot be checked is not sent.
 * Requests made at the same moment share one check. MCP is all these clients use, and the client
 * token reaches it: nothing they send is worth the secret to whoever reads it.
 *
 * `userInitialize` (the user's own commands, never the bridge, whose requests are an agent's): the
 * initialize request, sent once as the client connects and right after a fresh proof, carries the
 * secret, as every other CLI request does, so that the session comes from the user's own share of
 * new sessions (server/limits.ts) and agents using up the clients' share cannot refuse it. Every
 * other request, the stream the client reopens by itself included, carries the client token.
 */
export function verifiedClientFetch(t: Target, opts: { userInitialize?: boolean } = {}): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  let checking: Promise<{ token: string; secret: string } | null> | null = null;
  const verified = (): Promise<{ token: string; secret: string } | null> =>
    (checking ??= (async () => {
      const secret = secretFor(t.configDir);
      if (!secret) return null;
      await requireVerifiedServer(t, secret, { fresh: true });
      const token = clientTokenFor(t.configDir);
      if (!token) throw new CliError(`No client token in ${clientTokenPath(t.configDir)}: the server writes it when it starts; restart it (\`opentabs stop\`, then \`opentabs start\`).`);
      return { token, secret };
    })().finally(() => {
      checking = null;
    }));
  return async (input, init) => {
    const creds = await verified();
    const headers = new Headers(init?.headers);
    if (creds) headers.set('authorization', `Bearer ${opts.userInitialize && isInitialize(init) ? creds.secret : creds.token}`);
    else headers.delete('authorization');
    return fetch(input, { ...init, headers });
  };
}

/** Whether a request an MCP client transport makes is its initialize (a POST whose JSON body's method is initialize). */
function isInitialize(init: RequestInit | undefined): boolean {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return false;
  try {
    return (JSON.parse(init.body) as { method?: unknown } | null)?.method === 'initialize';
  } catch {
    return false;
  }
}

/**
 * One authenticated JSON request. `okStatuses` lets a caller handle some error statuses itself
 * (e.g. `tool call` prints tool errors); any other non-2xx becomes a CliError.
 */
export async function api<T = unknown>(
  t: Target,
  method: string,
  path: string,
  opts: { body?: unknown; secret?: string | null; okStatuses?: number[]; timeoutMs?: number } = {},
): Promise<ApiResponse<T>> {
  const secret = opts.secret === undefined ? secretFor(t.configDir) : opts.secret;
  if (secret) await requireVerifiedServer(t, secret);
  const headers: Record<string, string> = {};
  if (secret) headers.authorization = `Bearer ${secret}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${t.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined,
    });
  } catch (e) {
    const name = (e as Error).name;
    if (name === 'TimeoutError') throw new CliError(`The server on ${t.url} did not answer ${method} ${path} in time.`);
    throw new CliError(notRunningMessage(t));
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  if (res.status === 401 && !(opts.okStatuses ?? []).includes(401)) {
    throw new CliError(
      `The server on ${t.url} refused the secret from ${join(t.configDir, 'extension', 'auth.json')} (401). ` +
        'Is it running with a different config dir (OPENTABS_CONFIG_DIR)? If you rotated the secret, run `opentabs stop && opentabs start`.',
    );
  }
  if (!res.ok && !(opts.okStatuses ?? []).includes(res.status)) {
    // The server's words (a page's or a plugin's error among them): its suggested commands are
    // already written to run where it runs, so the CLI rewrites none of them (output.ts literal()).
    throw new CliError(`${method} ${path} failed: ${literal(errorMessage(res.status, body))}`);
  }
  return { status: res.status, body: body as T };
}

/**
 * A server answers on the target's port, but this config dir holds no secret: every server writes
 * its config dir's secret when it starts, so that server belongs to another config dir.
 */
export function noSecret(t: Target): { detail: string } {
  return {
    detail:
      `a server answers on ${t.url}, but it is not this config dir's: ${t.configDir} holds no secret ` +
      `(${join(t.configDir, 'extension', 'auth.json')} is missing; a server writes it when it starts)`,
  };
}

/** Authenticated /health, or null when the server is not reachable. */
export async function fetchHealth(t: Target): Promise<HealthPayload | null> {
  if (secretFor(t.configDir) === null) {
    // Unauthenticated, /health says only {"status":"ok"}: not enough to report as this dir's server.
    if ((await probePort(t.port)).kind === 'free') return null;
    const { detail } = noSecret(t);
    throw new CliError(`${detail[0]!.toUpperCase()}${detail.slice(1)}. ${await otherServerFix(t)}`);
  }
  try {
    const r = await api<HealthPayload>(t, 'GET', '/health', { timeoutMs: 5000 });
    return r.body;
  } catch (e) {
    if (e instanceof CliError && e.message === notRunningMessage(t)) return null;
    throw e;
  }
}

/**
 * GET /health as the server writes it (server/routes/health.ts): the full payload with a valid
 * token, only `{ status }` without one.
 */
export type HealthPayload = { status: string } & Partial<FullHealth>;
