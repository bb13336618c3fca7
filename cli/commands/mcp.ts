/**
 * `opentabs mcp`: a stdio MCP server for stdio-only clients (Claude Desktop, MCP Inspector) that
 * forwards every JSON-RPC message to the running server's /mcp and back — requests, responses and
 * notifications both ways (list_changed, progress, logging, cancelled). Starts the server in the
 * background when none is running. stdout carries protocol only; everything else goes to stderr.
 * A line of stdin that is not JSON is answered with a parse error (-32700); a JSON-RPC batch is
 * answered as one array in a session whose revision has batches (2024-11-05, 2025-03-26) and
 * refused (-32600) otherwise.
 */
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCRequest, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, err, out, say, usageError } from '../output.ts';
import { selfCommandText, selfSpawnCommand } from '../self.ts';
import { join } from 'node:path';
import { notRunningMessage, probePort, requireVerifiedServer, resolveTarget, secretFor, verifiedClientFetch, type Target } from '../server-client.ts';
import { DEFAULT_PORT } from '../../server/limits.ts';

const HELP = `Usage: opentabs mcp [--gateway] [--no-start] [--port N]

Run a stdio MCP server that bridges to the OpenTabs server's Streamable HTTP endpoint, for
clients that only speak stdio. Example client config (Claude Desktop):

  { "mcpServers": { "opentabs": { "command": "opentabs", "args": ["mcp"] } } }

\`opentabs start --show-config\` prints it with the absolute command, which a client started from
a desktop launcher needs (its PATH may have neither npm's global bin nor node).

Starts the server in the background if it is not running. Only MCP messages go to stdout.

Options:
  --gateway    Bridge to /mcp/gateway (2 meta-tools) instead of /mcp (every tool)
  --no-start   Fail instead of starting the server when it is not running
  --port N     Server port`;

/** How long to wait for a background server started by the bridge. */
const AUTOSTART_TIMEOUT_MS = 90_000;
/** After stdin closes, how long the bridge still waits for answers to requests it forwarded. */
const DRAIN_AFTER_STDIN_MS = 30_000;

export const command: Command = {
  name: 'mcp',
  summary: 'Stdio MCP bridge',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { gateway: { type: 'boolean' }, 'no-start': { type: 'boolean' }, port: { type: 'string' } }, 'mcp');
    if (values.help) return (say(HELP), 0);
    if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'mcp');
    const t = resolveTarget(values.port, 'mcp');
    try {
      if ((await probePort(t.port)).kind !== 'opentabs') {
        if (values['no-start']) throw new CliError(`${notRunningMessage(t)} (With --no-start the bridge does not start it.)`);
        await autostart(t);
      }
      await runBridge(t, values.gateway ? '/mcp/gateway' : '/mcp');
    } catch (e) {
      // The client started the bridge and shows only "connection closed" when it exits: answer
      // what it already sent with the reason, which it shows, then exit with the error on stderr.
      if (e instanceof CliError) await answerWithError(e instanceof StartFailed ? e.reason : e.message);
      throw e;
    }
    return -1;
  },
};

/**
 * `opentabs start --background` as a child. On success one line goes to stderr; the child prints
 * no client config block (secret included: not for a client's log), so a later `opentabs start`
 * still shows it once. On failure the child's output is shown, since it says why.
 */
async function autostart(t: Target): Promise<void> {
  const [cmd, ...args] = selfSpawnCommand();
  const child = spawn(cmd, [...args, 'start', '--background', '--port', String(t.port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', OPENTABS_START_NO_BANNER: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      resolve(1);
    }, AUTOSTART_TIMEOUT_MS);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c ?? 1);
    });
  });
  // Another client may have started it at the same moment (our child then lost the port race):
  // what matters is that a server answers now.
  if ((await probePort(t.port)).kind !== 'opentabs') {
    const why = stderr.trim();
    if (why) err(why);
    const head = `Could not start the OpenTabs server on ${t.url} (exit ${code})`;
    const runIt = `; run \`${selfCommandText(['start', ...(t.port === DEFAULT_PORT ? [] : ['--port', String(t.port)])])}\` to see why.`;
    throw new StartFailed(`${head}${why ? ': see the error above.' : runIt}`, why ? `${head}: ${why.replace(/^error: /, '')}` : `${head}${runIt}`);
  }
  const pid = /\(pid (\d+)\)/.exec(stdout)?.[1];
  log(`started the OpenTabs server on ${t.url} in the background${pid ? ` (pid ${pid})` : ''}; logs: ${join(t.configDir, 'server.log')}`);
}

/** The autostart failed: `reason` is the whole story (the start's own error included) for the client. */
class StartFailed extends CliError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

/** How long a bridge that cannot reach a server waits for the client's first request to answer it. */
const ERROR_ANSWER_WAIT_MS = 10_000;

/**
 * The bridge cannot serve (no server, or one it cannot trust): answer the requests the client
 * has written (or writes within ERROR_ANSWER_WAIT_MS) with a JSON-RPC error carrying `message`,
 * so that a client such as Claude Desktop or the MCP Inspector shows why instead of "connection
 * closed". Not when stdin is a terminal: a person there reads stderr.
 */
async function answerWithError(message: string): Promise<void> {
  if ((await import('node:tty')).isatty(0)) return;
  const stdio = new StdioServerTransport();
  await new Promise<void>((resolve) => {
    let answering = false;
    const timer = setTimeout(() => {
      if (!answering) resolve();
    }, ERROR_ANSWER_WAIT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stdio.onmessage = (msg) => {
      if (!isJSONRPCRequest(msg)) return;
      answering = true;
      void stdio
        .send({ jsonrpc: '2.0', id: msg.id, error: { code: -32603, message } })
        .catch(() => {})
        .finally(done);
    };
    stdio.onerror = () => {};
    process.stdin.once('end', () => {
      if (!answering) done();
    });
    void stdio.start();
  });
  await stdio.close().catch(() => {});
}

/** The 2026-era revision a message names in its _meta, if any. */
function modernVersionOf(msg: JSONRPCMessage): string | undefined {
  const meta = (msg as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const v = meta?.['io.modelcontextprotocol/protocolVersion'];
  return typeof v === 'string' ? v : undefined;
}

/** A header value as MCP carries it: plain when it is safe header text, else `=?base64?…?=`. */
function headerValue(v: string): string {
  const plain = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !(v.startsWith('=?base64?') && v.endsWith('?='));
  return plain ? v : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;
}

/** A JSON-RPC batch is part of these revisions only (2025-06-18 removed batching). */
const allowsBatches = (protocolVersion: string | undefined): boolean => protocolVersion !== undefined && protocolVersion < '2025-06-18';

const isMessage = (m: unknown): boolean => {
  if (typeof m !== 'object' || m === null || Array.isArray(m) || (m as { jsonrpc?: unknown }).jsonrpc !== '2.0') return false;
  const { method, id } = m as { method?: unknown; id?: unknown };
  const idOk = typeof id === 'string' || typeof id === 'number';
  return typeof method === 'string' ? id === undefined || idOk : idOk && ('result' in m || 'error' in m);
};

/** The `data` of each event of an SSE body. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
    }
  }
}

function log(msg: string): void {
  err(`[opentabs mcp] ${msg}`);
}

export async function runBridge(t: Target, path: string): Promise<void> {
  // Checked once up front: a wrong process on the port stops the bridge before it serves stdio.
  const firstSecret = secretFor(t.configDir);
  if (firstSecret) await requireVerifiedServer(t, firstSecret);
  // Every request carries the client token, each after a fresh check of the process on the port
  // (the bridge only forwards MCP, which the client token reaches; cli/server-client.ts).
  const proofFetch = verifiedClientFetch(t);
  // stdin reaches the SDK's stdio transport through `input`, one message a line, after the lines
  // it would drop without an answer are answered here (see onLine below).
  const input = new PassThrough();
  const stdio = new StdioServerTransport(input, process.stdout);
  const url = new URL(`${t.url}${path}`);
  let http: StreamableHTTPClientTransport;
  let initRequest: JSONRPCRequest | null = null;
  let protocolVersion: string | undefined;
  let reinit: Promise<void> | null = null;
  let reinitSeq = 0;
  const pendingInternal = new Map<string, (msg: JSONRPCMessage) => void>();
  let closing = false;

  /** True from a lost session until a new one is open: the next message re-initializes first. */
  let sessionLost = false;

  const makeHttp = () => {
    const h = new StreamableHTTPClientTransport(url, { fetch: proofFetch });
    h.onmessage = (msg) => {
      const id = (msg as { id?: unknown }).id;
      if (typeof id === 'string' && pendingInternal.has(id)) {
        pendingInternal.get(id)!(msg);
        pendingInternal.delete(id);
        return;
      }
      // The client negotiated a protocol version; later HTTP requests must carry it.
      const result = (msg as { result?: { protocolVersion?: unknown } }).result;
      if (initRequest && id === initRequest.id && typeof result?.protocolVersion === 'string') {
        protocolVersion = result.protocolVersion;
        initResult = result;
        h.setProtocolVersion(protocolVersion);
      }
      if (id !== undefined && !('method' in msg) && cancelledIds.delete(id as string | number)) return answeredNone(id as string | number);
      stdio.send(msg).catch((e) => log(`writing to stdout failed: ${(e as Error).message}`));
    };
    h.onerror = (e) => {
      if (!closing) log(`HTTP transport: ${e.message}`);
    };
    return h;
  };

  /** The server lost our session (restart, idle sweep): open a new one with the client's own initialize. */
  const reinitialize = () =>
    (reinit ??= (async () => {
      if (!initRequest) return;
      log('session lost; re-initializing with the server');
      sessionLost = true;
      // A new transport at once: should this fail (no server, or one that cannot prove itself),
      // the next message finds a usable one and tries again.
      await http.close().catch(() => {});
      http = makeHttp();
      await http.start();
      const id = `opentabs-bridge-reinit-${++reinitSeq}`;
      const answered = new Promise<JSONRPCMessage>((resolve) => pendingInternal.set(id, resolve));
      await http.send({ ...initRequest, id });
      const answer = (await answered) as { result?: { protocolVersion?: string } };
      if (answer.result?.protocolVersion) http.setProtocolVersion(answer.result.protocolVersion);
      await http.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      sessionLost = false;
    })().finally(() => {
      reinit = null;
    }));

  const forward = async (msg: JSONRPCMessage, retry = true): Promise<void> => {
    if (reinit) await reinit.catch(() => {});
    const initialize = isJSONRPCRequest(msg) && msg.method === 'initialize';
    try {
      if (sessionLost && !initialize) await reinitialize();
      await http.send(msg);
    } catch (e) {
      const status = e instanceof StreamableHTTPError ? e.code : undefined;
      if (retry && status === 404 && initRequest && !initialize) {
        try {
          await reinitialize();
          return forward(msg, false);
        } catch (e2) {
          e = e2;
        }
      }
      if (isJSONRPCRequest(msg)) {
        await stdio.send({
          jsonrpc: '2.0',
          id: msg.id,
          error: { code: -32603, message: `OpenTabs server at ${url.href} failed: ${(e as Error).message}` },
        });
      } else {
        log(`could not forward ${'method' in msg ? msg.method : 'message'}: ${(e as Error).message}`);
      }
    }
  };

  http = makeHttp();
  /**
   * Settles when the first initialize has been answered (the session exists). Clients may write
   * initialize, notifications/initialized and tools/list in one burst: everything after the
   * initialize waits for it, in order, since without a session id the server refuses them.
   */
  let sessionReady: Promise<void> | null = null;
  /** The server's answer to the first initialize, replayed for a repeated one: one session per bridge. */
  let initResult: unknown;
  // Protocol 2026-07-28 (stateless): a request whose _meta names its revision is one POST of its
  // own with the routing headers; its answer (JSON, or an SSE stream with progress and log lines
  // first) goes to stdout. On stdio, notifications/cancelled is the cancellation: it closes that
  // request's HTTP stream, which is how the server hears it.
  const modernCalls = new Map<string | number, AbortController>();
  const forwardModern = async (msg: JSONRPCRequest, version: string): Promise<void> => {
    const ac = new AbortController();
    modernCalls.set(msg.id, ac);
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': version,
        'mcp-method': msg.method,
      };
      const p = (msg.params ?? {}) as { name?: unknown; uri?: unknown };
      const name = typeof p.name === 'string' ? p.name : typeof p.uri === 'string' ? p.uri : undefined;
      if (name !== undefined && ['tools/call', 'resources/read', 'prompts/get'].includes(msg.method)) headers['mcp-name'] = headerValue(name);
      const res = await proofFetch(url, { method: 'POST', headers, body: JSON.stringify(msg), signal: ac.signal });
      const type = res.headers.get('content-type') ?? '';
      if (type.includes('text/event-stream') && res.body) {
        for await (const data of sseData(res.body)) await stdio.send(JSON.parse(data) as JSONRPCMessage);
        return;
      }
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {}
      if (typeof body === 'object' && body !== null && (body as { jsonrpc?: unknown }).jsonrpc === '2.0') {
        await stdio.send({ ...(body as JSONRPCMessage), id: msg.id } as JSONRPCMessage);
        return;
      }
      const detail = (body as { error?: { message?: string } } | undefined)?.error?.message ?? (text.slice(0, 300) || res.statusText);
      await stdio.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32603, message: `OpenTabs server at ${url.href} answered ${res.status}: ${detail}` } });
    } catch (e) {
      if (ac.signal.aborted) return;
      await stdio.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32603, message: `OpenTabs server at ${url.href} failed: ${(e as Error).message}` } }).catch(() => {});
    } finally {
      modernCalls.delete(msg.id);
    }
  };

  // Requests read from stdin and not yet answered on stdout: when stdin closes (`… | opentabs mcp`,
  // or a client that writes its last request and closes), their answers are still written.
  const unanswered = new Set<string | number>();
  /** Requests the client cancelled whose answer is still to come from the server (and is dropped). */
  const cancelledIds = new Set<string | number>();
  let stdinEnded = false;
  /** A request that will get no answer: no longer pending. */
  const answeredNone = (id: string | number) => {
    if (unanswered.delete(id) && stdinEnded && unanswered.size === 0) void shutdown();
  };
  const stdioSend = stdio.send.bind(stdio);
  /** The requests of each JSON-RPC batch still running, by id: their answers go out together, as one array. */
  const batchOf = new Map<string | number, { waiting: number; answers: unknown[] }>();
  stdio.send = async (msg) => {
    const id = (msg as { id?: string | number }).id;
    const batch = id !== undefined && !('method' in msg) ? batchOf.get(id) : undefined;
    if (batch) {
      batchOf.delete(id!);
      batch.answers.push(msg);
      if (--batch.waiting > 0) return;
    }
    try {
      await stdioSend(batch ? (batch.answers as unknown as JSONRPCMessage) : msg);
    } finally {
      const ids = batch ? batch.answers.map((a) => (a as { id?: string | number }).id) : [id];
      let answered = false;
      for (const x of ids) if (x !== undefined && x !== null && (batch || !('method' in msg)) && unanswered.delete(x)) answered = true;
      if (answered && stdinEnded && unanswered.size === 0) void shutdown();
    }
  };

  /**
   * A JSON-RPC batch (an array on one line), which the SDK's stdio transport cannot read: in a
   * session whose revision has batches (2024-11-05, 2025-03-26) its messages are handled one by
   * one and the answers to its requests written as one array; in any other (2025-06-18 removed
   * batching; the stateless 2026 revision never had it) it is refused as an Invalid Request.
   */
  const onBatch = async (items: unknown[]): Promise<void> => {
    const requests = items.filter((m) => isMessage(m) && typeof (m as { method?: unknown }).method === 'string' && (m as { id?: unknown }).id !== undefined) as JSONRPCRequest[];
    // Pending from now: stdin closing while the session opens still waits for their answers.
    for (const r of requests) unanswered.add(r.id);
    if (sessionReady) await sessionReady;
    if (items.length === 0 || !allowsBatches(protocolVersion)) {
      for (const r of requests) unanswered.delete(r.id);
      const why = items.length === 0 ? 'an empty batch' : `JSON-RPC batches are not part of protocol revision ${protocolVersion ?? 'in use'} (they were removed in 2025-06-18); send each message on a line of its own`;
      await stdioSend({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: ${why}` } } as unknown as JSONRPCMessage).catch(() => {});
      if (stdinEnded && unanswered.size === 0) void shutdown();
      return;
    }
    const invalid = items.filter((m) => !isMessage(m)).map(() => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } }));
    if (requests.length > 0) {
      const batch = { waiting: requests.length, answers: invalid as unknown[] };
      for (const r of requests) batchOf.set(r.id, batch);
    } else if (invalid.length > 0) await stdioSend(invalid as unknown as JSONRPCMessage).catch(() => {});
    for (const m of items) if (isMessage(m)) input.write(`${JSON.stringify(m)}\n`);
  };

  /**
   * One line of stdin: not JSON is a parse error (-32700, id null) and JSON that is no JSON-RPC
   * message an Invalid Request (-32600), as JSON-RPC 2.0 answers them; an array is a batch.
   */
  const onLine = (line: string): void => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      log(`stdin: not JSON: ${(e as Error).message}`);
      void stdioSend({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${(e as Error).message}` } } as unknown as JSONRPCMessage).catch(() => {});
      return;
    }
    if (Array.isArray(parsed)) return void onBatch(parsed);
    if (!isMessage(parsed) && !(typeof parsed === 'object' && parsed !== null && ('result' in parsed || 'error' in parsed))) {
      // Not a request, notification or response (an id of null, a method that is not a string …):
      // answered as JSON-RPC 2.0 does, with its id when it has a usable one. Responses are never answered.
      const id = (parsed as { id?: unknown } | null)?.id;
      const answerId = typeof id === 'string' || typeof id === 'number' ? id : null;
      void stdioSend({ jsonrpc: '2.0', id: answerId, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request or notification' } } as unknown as JSONRPCMessage).catch(() => {});
      return;
    }
    // Pending from the moment it is read (the transport hands it on a tick later): stdin closing
    // right behind it still waits for its answer.
    const { method, id } = (parsed ?? {}) as { method?: unknown; id?: unknown };
    if (isMessage(parsed) && typeof method === 'string' && method !== 'subscriptions/listen' && id !== undefined) unanswered.add(id as string | number);
    input.write(`${text}\n`);
  };
  const decoder = new StringDecoder('utf8');
  let partial = '';
  process.stdin.on('data', (chunk: Buffer) => {
    partial += decoder.write(chunk);
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      onLine(line);
    }
  });
  // A last line without its newline is still a message. (`input` is never ended: the SDK's
  // transport reads it for as long as the bridge runs, and a batch may still be written into it.)
  process.stdin.once('end', () => {
    partial += decoder.end();
    if (partial !== '') onLine(partial);
    partial = '';
  });

  stdio.onmessage = (msg) => {
    // A subscriptions/listen is answered only when its subscription ends: a client that closes
    // stdin does not wait for it (its stream ends with the bridge).
    if (isJSONRPCRequest(msg) && msg.method !== 'subscriptions/listen') unanswered.add(msg.id);
    const version = modernVersionOf(msg);
    if (version !== undefined && isJSONRPCRequest(msg) && msg.method !== 'initialize') {
      void forwardModern(msg, version);
      return;
    }
    if (!isJSONRPCRequest(msg) && 'method' in msg && msg.method === 'notifications/cancelled') {
      const requestId = (msg.params as { requestId?: string | number } | undefined)?.requestId;
      const call = requestId === undefined ? undefined : modernCalls.get(requestId);
      if (call) {
        call.abort();
        answeredNone(requestId!);
        return;
      }
      // A session's call: the server stops it, and its answer, which still comes back over HTTP,
      // is not written (a cancelled request gets no answer).
      if (requestId !== undefined && unanswered.has(requestId)) cancelledIds.add(requestId);
    }
    if (isJSONRPCRequest(msg) && msg.method === 'initialize') {
      if (sessionReady) {
        // A second initialize on the same stdio connection is answered from the first, so the
        // bridge never opens a second server session (each counts against the session limit).
        const id = msg.id;
        void sessionReady.then(() =>
          initResult !== undefined ? stdio.send({ jsonrpc: '2.0', id, result: initResult as never }).catch(() => {}) : forward(msg),
        );
        return;
      }
      initRequest = msg;
      sessionReady = forward(msg).catch(() => {});
      return;
    }
    // Callbacks on one promise run in the order they were added: the burst keeps its order. Once
    // the session exists they run at once, and a long call never holds back a later message.
    if (sessionReady) void sessionReady.then(() => forward(msg));
    else void forward(msg);
  };
  stdio.onerror = (e) => log(`stdin: ${e.message}`);

  const shutdown = async () => {
    if (closing) return;
    closing = true;
    // End the server-side session so it does not wait for the idle sweep.
    await http.terminateSession().catch(() => {});
    await http.close().catch(() => {});
    process.exit(0);
  };
  const stdinClosed = () => {
    if (stdinEnded) return;
    stdinEnded = true;
    if (unanswered.size === 0) return void shutdown();
    log(`stdin closed; writing the answers to ${unanswered.size} pending request(s) first`);
    setTimeout(() => void shutdown(), DRAIN_AFTER_STDIN_MS);
  };
  process.stdin.once('end', stdinClosed);
  process.stdin.once('close', stdinClosed);
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());

  await http.start();
  await stdio.start();
  log(`bridging stdio ⇄ ${url.href}`);
}
