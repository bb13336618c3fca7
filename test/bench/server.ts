/**
 * `npm run bench:server`: server-side call path figures (never assertions).
 *
 * The server runs in a child process (this file with --child) on a temp config dir with
 * synthetic plugins; this process plays the extension (a fake that answers tool.dispatch at
 * once) and the clients. Reported:
 *   - sequential p50/p99 latency and calls/s at 1, 8 and 32 in flight, over REST and over MCP
 *     (raw Streamable HTTP: one POST per tools/call, SSE answer read in full)
 *   - the HTTP floor (GET /health) and WS floor (ping → pong) to judge the server's own overhead
 *   - tools/list latency with 100 and 2,000 synthetic plugin tools
 *   - idle RSS of the server process
 *   - memory under load (also alone with --memory): RSS and JS heap of the server idle with the
 *     extension connected, during and after 100,000 calls (REST and MCP, 8 in flight), after
 *     a forced full GC (what is retained, not the allocator's high-water mark), and after the
 *     memory keeper's quiet-spell release (idle, and once the calls have stopped)
 *   - start-up (also alone with --startup): `bun cli/main.ts start --port 0` with 100 plugins ×
 *     20 tools: spawn → /health answering, and spawn → every plugin tool listed
 *   - memory under a mixed load (alone only, --memory-mixed): what `npm run bench` reads at its end,
 *     without a browser (test/bench/lib/mixed-memory.ts)
 *   - first calls (also alone with --first-calls): every built-in tool called twice on a started
 *     server, from the start-up bundle and from source: what the first call of each costs more
 *     (its argument validator), and RSS before and after
 * Prints a table and writes bench-results/server-<timestamp>.json. `--calls` runs the call path
 * section alone and only prints it (for comparing two checkouts in turn).
 * BENCH_PROFILE=1 also writes a CPU profile (markdown) of the call-path server to bench-results/.
 * Memory knobs (to compare variants; never in the product): BENCH_MEM_CALLS (default 100000),
 * BENCH_MEM_MODE=rest|mcp|mixed (default mixed: half each), BENCH_MEM_CONC (default 8),
 * BENCH_MEM_NEWCONN=1 (a new TCP connection per REST call instead of keep-alive),
 * BENCH_CHILD_ENV='{"K":"V"}' (extra environment of the server child), BENCH_BUN_FLAGS='--smol',
 * BENCH_NO_KEEPER=1 (the server's memory keeper stopped: the figure before it existed),
 * BENCH_SMAPS=1 (which mappings grew), BENCH_COUNTS=1 (cells promoted by young collections).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildServerBundle, bundleStaleReason } from '../../cli/server-bundle.ts';
import { withServerEnv } from '../../cli/server-env.ts';
import { MEMORY_RELEASE_IDLE_MS, PLUGIN_MAX_CONCURRENCY } from '../../server/limits.ts';
import { FRESH_MS } from '../../server/plugins/folder-cache.ts';
import { rssParts } from './lib/proc.ts';

const ROOT = join(import.meta.dir, '..', '..');
const RELEASED_IDLE = `idle, ${MEMORY_RELEASE_IDLE_MS / 1000 + 1.5} s later (quiet-spell release)`;
const RELEASED_LATER = `${MEMORY_RELEASE_IDLE_MS / 1000 + 2} s later (quiet-spell release)`;

// ---------------------------------------------------------------- synthetic plugins

function writePlugins(dir: string, plugins: number, toolsEach: number): string[] {
  const paths: string[] = [];
  for (let p = 0; p < plugins; p++) {
    const name = `bench${p}`;
    const pdir = join(dir, 'plugins-src', name);
    mkdirSync(join(pdir, 'dist'), { recursive: true });
    writeFileSync(join(pdir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
    const tools = Array.from({ length: toolsEach }, (_, t) => ({
      name: t === 0 ? 'echo' : `tool_${t}`,
      description: `Synthetic tool ${t} of ${name}: does a representative amount of describing so the payload is realistic.`,
      inputSchema: {
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 0, description: 'A number' },
          query: { type: 'string', description: 'Search text' },
          options: { type: 'object', properties: { limit: { type: 'integer' }, cursor: { type: 'string' } }, additionalProperties: false },
        },
        additionalProperties: false,
      },
    }));
    writeFileSync(
      join(pdir, 'dist', 'tools.json'),
      JSON.stringify({ name, displayName: name, description: `Bench plugin ${p}`, version: '1.0.0', sdkVersion: '0.1.0', urlPatterns: ['http://127.0.0.1/*'], excludePatterns: [], tools }),
    );
    writeFileSync(join(pdir, 'dist', 'adapter.js'), `(()=>{/*${name}*/})();\n`);
    paths.push(pdir);
  }
  return paths;
}

interface Child {
  proc: ChildProcess;
  port: number;
  secret: string;
  tools: number;
  dir: string;
  base: string;
  /** One stdin command to the child (`gc`, `mem`), its one-line JSON answer. */
  command(line: string): Promise<MemReading>;
}

/** The child's own view of its memory (bytes). */
interface MemReading {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  mallocInUse: number;
  mallocCommitted: number;
  heapCapacity: number;
  /** The memory keeper's full collections so far, and their process CPU (ms). */
  keeperCollections: number;
  keeperCollectMs: number;
}

/** `--calls`: the call-path section only (floors, REST and MCP at 1, 8, 32 in flight; ≈ 20 s), printed, not written. */
const CALLS_ONLY = process.argv.includes('--calls');

/** BENCH_PROFILE=1: the call-path server child writes a markdown CPU profile to bench-results/. */
const PROFILE = process.env.BENCH_PROFILE === '1';

async function startChild(plugins: number, toolsEach: number, profile = false): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-bench-'));
  const paths = writePlugins(dir, plugins, toolsEach);
  const permissions = Object.fromEntries(paths.map((_, i) => [`bench${i}`, { default: 'auto' }]));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: paths, permissions, pluginSettings: {} }));
  const profArgs = profile ? ['--cpu-prof-md', `--cpu-prof-dir=${join(ROOT, 'bench-results')}`] : [];
  const bunFlags = (process.env.BENCH_BUN_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const childEnv = process.env.BENCH_CHILD_ENV ? (JSON.parse(process.env.BENCH_CHILD_ENV) as Record<string, string>) : {};
  const proc = spawn(process.execPath, [...bunFlags, ...profArgs, join(import.meta.dir, 'server.ts'), '--child', dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
    cwd: ROOT,
    // As the CLI starts a server (cli/server-env.ts); BENCH_CHILD_ENV can override it.
    env: { ...withServerEnv(process.env), ...childEnv },
  });
  // stdout is read as lines: the first is the child's address, each later one answers a command.
  const lines: string[] = [];
  let waiter: (() => void) | null = null;
  let buf = '';
  proc.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    waiter?.();
  });
  const nextLine = (timeoutMs: number, what: string) =>
    new Promise<string>((resolve, reject) => {
      const take = () => {
        if (lines.length === 0) return false;
        clearTimeout(timer);
        proc.off('exit', onExit);
        waiter = null;
        resolve(lines.shift()!);
        return true;
      };
      const onExit = (code: number | null) => (clearTimeout(timer), reject(new Error(`server child exited (${code}) waiting for ${what}`)));
      const timer = setTimeout(() => ((waiter = null), reject(new Error(`${what}: no answer within ${timeoutMs} ms`))), timeoutMs);
      proc.once('exit', onExit);
      if (!take()) waiter = () => void take();
    });
  const info = JSON.parse(await nextLine(30_000, 'server child start'));
  const command = async (line: string) => {
    proc.stdin!.write(`${line}\n`);
    return JSON.parse(await nextLine(30_000, `command ${line}`)) as MemReading;
  };
  return { proc, dir, ...info, base: `http://127.0.0.1:${info.port}`, command };
}

async function stopChild(c: Child): Promise<void> {
  const exited = new Promise((r) => c.proc.once('exit', r));
  c.proc.kill('SIGTERM');
  await Promise.race([exited, Bun.sleep(5000)]);
  if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  rmSync(c.dir, { recursive: true, force: true });
}

/** CPU time (user + system) the process has used, in ms (from /proc; 10 ms resolution). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // After "pid (comm) ": state is field 3 → index 0; utime field 14 → index 11, stime → 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

// ---------------------------------------------------------------- the fake extension (answers at once)

async function connectExtension(c: Child): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${c.port}/ws`, ['opentabs', c.secret]);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('extension connect failed'));
  });
  ws.onmessage = (e) => {
    const s = String(e.data);
    // Only requests need an answer; notifications (sync.full, invocationStart/End) are ignored.
    if (!s.includes('"tool.dispatch"')) {
      if (s.includes('"pong"')) pongWaiter?.();
      return;
    }
    const msg = JSON.parse(s);
    ws.send(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"value":{"ok":true,"n":${Number(msg.params.input.n ?? 0)}}}}`);
  };
  return ws;
}

let pongWaiter: (() => void) | null = null;

// ---------------------------------------------------------------- clients

interface Stats {
  /** Server process CPU per call (µs): the server's own cost, independent of client noise. */
  serverCpuUs?: number;
  p50: number;
  p99: number;
  mean: number;
  callsPerSec: number;
  n: number;
}

function stats(samples: number[], wallMs: number): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { p50: round(q(0.5)), p99: round(q(0.99)), mean: round(s.reduce((a, b) => a + b, 0) / s.length), callsPerSec: Math.round((s.length / wallMs) * 1000), n: s.length };
}

/** Run `total` calls with `concurrency` in flight; per-call latency in ms. */
async function load(total: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Stats> {
  const samples: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const s = performance.now();
      await one(i);
      samples.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return stats(samples, performance.now() - t0);
}

const PLUGINS_FOR_CALLS = 8;
/**
 * The shipped limits except where they refuse the bench's own load: 32 calls in flight spread
 * over 8 plugins can put 6 or more on one plugin when answers come back out of order, over the
 * shipped 5 per plugin (the report says so).
 */
const BENCH_LIMITS = { pluginMaxConcurrency: 64 };

function restCaller(c: Child) {
  const headers = { Authorization: `Bearer ${c.secret}`, 'content-type': 'application/json' };
  return async (i: number) => {
    const res = await fetch(`${c.base}/tools/bench${i % PLUGINS_FOR_CALLS}_echo/call`, { method: 'POST', headers, body: `{"arguments":{"n":${i}}}` });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`REST call failed: ${res.status} ${text}`);
  };
}

async function mcpSession(c: Child, path = '/mcp'): Promise<Record<string, string>> {
  const headers: Record<string, string> = { Authorization: `Bearer ${c.secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(`${c.base}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
  });
  await init.text();
  const sid = init.headers.get('mcp-session-id');
  if (!sid) throw new Error(`initialize failed: ${init.status}`);
  const h = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
  const note = await fetch(`${c.base}${path}`, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  await note.text();
  return h;
}

function mcpCaller(c: Child, headers: Record<string, string>) {
  return async (i: number) => {
    const res = await fetch(`${c.base}/mcp`, {
      method: 'POST',
      headers,
      body: `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"bench${i % PLUGINS_FOR_CALLS}_echo","arguments":{"n":${i}}}}`,
    });
    const text = await res.text();
    if (!text.includes('"ok":true')) throw new Error(`MCP call failed: ${res.status} ${text.slice(0, 300)}`);
  };
}

function mcpLister(c: Child, headers: Record<string, string>, expectTools: number) {
  return async (i: number) => {
    const res = await fetch(`${c.base}/mcp`, { method: 'POST', headers, body: `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/list","params":{}}` });
    const text = await res.text();
    if (!text.includes(`bench0_echo`) || text.length < expectTools * 50) throw new Error(`tools/list failed: ${res.status} ${text.slice(0, 200)}`);
  };
}

async function main(): Promise<void> {
  /** load() on a server child, adding its CPU per call. */
  const measured = async (c: Child, total: number, conc: number, one: (i: number) => Promise<void>): Promise<Stats> => {
    const before = cpuMs(c.proc.pid!);
    const st = await load(total, conc, one);
    st.serverCpuUs = Math.round(((cpuMs(c.proc.pid!) - before) * 1000) / total);
    return st;
  };
  const results: Record<string, unknown> = { date: new Date().toISOString(), bun: Bun.version, cpus: navigator.hardwareConcurrency };
  const rows: [string, Stats | string][] = [];

  // ---- call path: 8 plugins with 1 tool each (+ the built-ins)
  const calls = await startChild(PLUGINS_FOR_CALLS, 1, PROFILE);
  let ext: WebSocket | undefined;
  try {
    await Bun.sleep(300);
    results.idleRssMb = rssParts(calls.proc.pid!).rss;
    ext = await connectExtension(calls);
    await Bun.sleep(100);

    const health = () => fetch(`${calls.base}/health`).then((r) => r.text()).then(() => {});
    await load(500, 1, health);
    rows.push(['HTTP floor: GET /health, 1 in flight', await measured(calls, 2000, 1, health)]);

    const wsPing = () =>
      new Promise<void>((resolve) => {
        pongWaiter = () => ((pongWaiter = null), resolve());
        ext!.send('{"jsonrpc":"2.0","method":"ping"}');
      });
    await load(200, 1, wsPing);
    rows.push(['WS floor: ping → pong, 1 in flight', await load(2000, 1, wsPing)]);

    const rest = restCaller(calls);
    await load(1000, 8, rest); // warm-up (JIT, validators)
    for (const conc of [1, 8, 32]) rows.push([`REST tools/:name/call, ${conc} in flight`, await measured(calls, conc === 1 ? 2000 : 5000, conc, rest)]);

    const h = await mcpSession(calls);
    const mcp = mcpCaller(calls, h);
    await load(1000, 8, mcp);
    for (const conc of [1, 8, 32]) rows.push([`MCP tools/call, ${conc} in flight`, await measured(calls, conc === 1 ? 2000 : 5000, conc, mcp)]);
    results.afterLoadRssMb = rssParts(calls.proc.pid!).rss;
  } finally {
    ext?.close();
    await stopChild(calls);
  }
  const pad = (s: string, n: number) => s.padEnd(n);
  if (CALLS_ONLY) {
    for (const [name, s] of rows) if (typeof s !== 'string') console.log(`${pad(name, 58)} ${pad(String(s.p50), 9)} ${pad(String(s.p99), 9)} ${pad(String(s.callsPerSec), 9)} ${pad(s.serverCpuUs === undefined ? '-' : String(s.serverCpuUs), 16)} ${s.n}`);
    console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    return;
  }

  // ---- tools/list at 100 and 2,000 plugin tools
  for (const [plugins, each] of [
    [10, 10],
    [40, 50],
  ] as const) {
    const c = await startChild(plugins, each);
    try {
      if (plugins * each > 1000) results.idleRssMb2000Tools = rssParts(c.proc.pid!).rss;
      const h = await mcpSession(c);
      const list = mcpLister(c, h, plugins * each);
      await load(100, 1, list);
      rows.push([`MCP tools/list, ${plugins * each} plugin tools (${c.tools} total)`, await measured(c, plugins * each > 1000 ? 500 : 2000, 1, list)]);
      if (plugins * each > 1000) results.afterListRssMb2000Tools = rssParts(c.proc.pid!).rss;
    } finally {
      await stopChild(c);
    }
  }

  results.memory = await benchMemory();
  results.startup = await benchStartup();
  results.firstCalls = [await benchFirstCalls(false), await benchFirstCalls(true)];
  results.loadavg = loadavg();

  // ---- print + write
  console.log(`\nOpenTabs server benchmark (bun ${Bun.version}, ${navigator.hardwareConcurrency} cpus)\n`);
  console.log(`${pad('scenario', 58)} ${pad('p50 ms', 9)} ${pad('p99 ms', 9)} ${pad('calls/s', 9)} ${pad('srv CPU µs/call', 16)} n`);
  for (const [name, s] of rows) {
    if (typeof s === 'string') console.log(`${pad(name, 58)} ${s}`);
    else console.log(`${pad(name, 58)} ${pad(String(s.p50), 9)} ${pad(String(s.p99), 9)} ${pad(String(s.callsPerSec), 9)} ${pad(s.serverCpuUs === undefined ? '-' : String(s.serverCpuUs), 16)} ${s.n}`);
  }
  console.log(
    `\nidle RSS: ${results.idleRssMb} MB (8 plugins); ${results.idleRssMb2000Tools} MB (2,000 tools), ${results.afterListRssMb2000Tools} MB after 600 tools/list of them; after call load: ${results.afterLoadRssMb} MB`,
  );
  console.log('srv CPU µs/call = CPU time of the server process during the scenario / calls (the server\'s own cost, HTTP + WS included).');
  console.log(`server limits raised for the bench: pluginMaxConcurrency ${BENCH_LIMITS.pluginMaxConcurrency} instead of ${PLUGIN_MAX_CONCURRENCY}`);
  console.log('targets: server overhead ≤ 0.3 ms p50 (call p50 minus the HTTP and WS floors), ≥ 5,000 calls/s at 32 in flight over MCP, tools/list ≤ 1 ms @100 and ≤ 5 ms @2,000, idle RSS ≤ 50 MB');
  printMemory(results.memory as Awaited<ReturnType<typeof benchMemory>>);
  printStartup(results.startup as Awaited<ReturnType<typeof benchStartup>>);
  printFirstCalls(results.firstCalls as FirstCalls[]);
  console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  results.rows = Object.fromEntries(rows);
  writeResults(results, '');
}

// ---------------------------------------------------------------- memory under load

const MEM_CALLS = Math.max(1, Math.min(1_000_000, Number(process.env.BENCH_MEM_CALLS ?? 100_000)));
const MEM_MODE = (process.env.BENCH_MEM_MODE ?? 'mixed') as 'rest' | 'mcp' | 'mixed';
const MEM_CONC = Math.max(1, Math.min(64, Number(process.env.BENCH_MEM_CONC ?? 8)));
const MEM_NEWCONN = process.env.BENCH_MEM_NEWCONN === '1';

/** Rss (kB) of each mapping of a process, keyed by start address + name (BENCH_SMAPS=1 diagnostics). */
function smaps(pid: number): Map<string, { name: string; kb: number; size: number }> {
  const out = new Map<string, { name: string; kb: number; size: number }>();
  let cur: { name: string; kb: number; size: number } | null = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = { name: `${head[4] || '[anon]'} ${head[3]}`, kb: 0, size: (parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024 };
      out.set(`${head[1]} ${cur.name}`, cur);
    } else if (cur && line.startsWith('Rss:')) cur.kb = Number(/\d+/.exec(line)![0]);
  }
  return out;
}

function printSmapsGrowth(before: ReturnType<typeof smaps>, after: ReturnType<typeof smaps>): void {
  const rows = [...after].map(([k, a]) => ({ k, name: a.name, size: a.size, kb: a.kb, d: a.kb - (before.get(k)?.kb ?? 0) })).filter((r) => r.d !== 0);
  rows.sort((a, b) => b.d - a.d);
  console.log('  smaps: mappings whose RSS changed the most (kB):');
  for (const r of rows.slice(0, 15)) console.log(`    ${String(r.d).padStart(7)}  now ${String(r.kb).padStart(7)} of ${String(r.size).padStart(8)}  ${r.k}`);
  const byName = new Map<string, number>();
  for (const r of rows) byName.set(r.name, (byName.get(r.name) ?? 0) + r.d);
  console.log(`    by name: ${[...byName].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, d]) => `${n} ${d}`).join(', ')}`);
}

interface MemPoint {
  label: string;
  /** VmRSS / RssAnon / RssFile from /proc (MB). */
  rss: number;
  anon: number;
  file: number;
  /** From inside the server (MB): JS heap in use, external (buffers held by JS objects). */
  heapUsed: number;
  external: number;
  /** The allocator (mimalloc) in use / committed, and the JS heap's capacity (MB). */
  mallocInUse: number;
  mallocCommitted: number;
  heapCapacity: number;
  gc: boolean;
}

async function benchMemory(): Promise<{ points: MemPoint[]; calls: number; mode: string; concurrency: number; newConnections: boolean; callsPerSec: number; serverCpuUs: number; keeperCollections: number; keeperCpuUs: number; keeper: boolean }> {
  const points: MemPoint[] = [];
  const c = await startChild(PLUGINS_FOR_CALLS, 1);
  let ext: WebSocket | undefined;
  const point = async (label: string, gc: boolean) => {
    const m = await c.command(gc ? 'gc' : 'mem');
    const p = { label, ...rssParts(c.proc.pid!), heapUsed: mb(m.heapUsed), external: mb(m.external), mallocInUse: mb(m.mallocInUse), mallocCommitted: mb(m.mallocCommitted), heapCapacity: mb(m.heapCapacity), gc };
    points.push(p);
    console.log(
      `  memory: ${label.padEnd(28)} RSS ${String(p.rss).padStart(6)} MB (anon ${p.anon}, file ${p.file})  heap ${p.heapUsed}/${p.heapCapacity}  malloc ${p.mallocInUse}/${p.mallocCommitted} committed  ext ${p.external}${gc ? '  [after GC]' : ''}`,
    );
  };
  try {
    await Bun.sleep(300);
    await point('idle, no extension', false);
    ext = await connectExtension(c);
    await Bun.sleep(300);
    await point('idle, extension connected', false);
    await point('idle, extension connected', true);
    // The keeper gives memory back after MEMORY_RELEASE_IDLE_MS of quiet (start-up counts as use).
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS + 1500);
    await point(RELEASED_IDLE, false);
    const smapsBefore = process.env.BENCH_SMAPS === '1' ? smaps(c.proc.pid!) : null;
    const headers = { Authorization: `Bearer ${c.secret}`, 'content-type': 'application/json' };
    const rest = MEM_NEWCONN
      ? async (i: number) => {
          const res = await fetch(`${c.base}/tools/bench${i % PLUGINS_FOR_CALLS}_echo/call`, { method: 'POST', headers: { ...headers, connection: 'close' }, body: `{"arguments":{"n":${i}}}`, keepalive: false });
          const text = await res.text();
          if (res.status !== 200) throw new Error(`REST call failed: ${res.status} ${text}`);
        }
      : restCaller(c);
    const mcp = MEM_MODE === 'rest' ? null : mcpCaller(c, await mcpSession(c));
    const one = (i: number) => (MEM_MODE === 'rest' || (MEM_MODE === 'mixed' && i % 2 === 0) ? rest(i) : mcp!(i));
    if (process.env.BENCH_ALLOC === '1') {
      // JS heap bytes allocated per call: heap size before/after a small batch (no collection in
      // between, most of the time: the smallest positive of a few tries).
      const health = () => fetch(`${c.base}/health`).then((r) => r.text()).then(() => {});
      const authHealth = () => fetch(`${c.base}/health`, { headers }).then((r) => r.text()).then(() => {});
      for (const [name, fn] of [['GET /health', health], ['GET /health (authenticated)', authHealth], ['REST', rest], ['MCP', mcp]] as const) {
        if (!fn) continue;
        await load(500, MEM_CONC, fn);
        const per: number[] = [];
        for (let k = 0; k < 8; k++) {
          const a = (await c.command('mem')).heapUsed;
          await load(200, MEM_CONC, fn);
          const b = (await c.command('mem')).heapUsed;
          if (b > a) per.push((b - a) / 200);
        }
        console.log(`  JS heap allocated per ${name} call: ${per.length ? Math.round(Math.min(...per)) : '?'} B (min of ${per.length}; all: ${per.map((x) => Math.round(x)).join(', ')})`);
      }
    }
    // Bounded: MEM_CALLS in slices of a fifth, a reading after each.
    const slice = Math.ceil(MEM_CALLS / 5);
    const t0 = performance.now();
    const cpu0 = cpuMs(c.proc.pid!);
    const keeper0 = await c.command('mem');
    for (let done = 0; done < MEM_CALLS; ) {
      const n = Math.min(slice, MEM_CALLS - done);
      const base = done;
      await load(n, MEM_CONC, (i) => one(base + i));
      done += n;
      await point(`after ${done.toLocaleString('en')} calls`, false);
      if (smapsBefore && done === n) printSmapsGrowth(smapsBefore, smaps(c.proc.pid!));
      if (process.env.BENCH_COUNTS === '1' && done === n) {
        // What survives young collections and is garbage by the next full one: counts after an
        // eden collection minus counts after a full one, by cell type.
        const eden = ((await c.command('eden')) as unknown as { counts: Record<string, number> }).counts;
        await c.command('gc');
        const full = ((await c.command('counts')) as unknown as { counts: Record<string, number> }).counts;
        const diff = Object.entries(eden).map(([k, v]) => [k, v - (full[k] ?? 0)] as const).filter(([, d]) => d > 0).sort((a, b) => b[1] - a[1]);
        console.log(`  promoted garbage after ${n} calls (cells by type): ${diff.slice(0, 25).map(([k, d]) => `${k} ${d}`).join(', ')}`);
      }
    }
    const callsPerSec = Math.round((MEM_CALLS / (performance.now() - t0)) * 1000);
    /** Server CPU per call over the whole run (µs), collections included. */
    const serverCpuUs = Math.round(((cpuMs(c.proc.pid!) - cpu0) * 1000) / MEM_CALLS);
    // The memory keeper's forced full collections during the calls: how many, and their CPU per call.
    const keeper1 = await c.command('mem');
    const keeperCollections = keeper1.keeperCollections - keeper0.keeperCollections;
    const keeperCpuUs = Math.round(((keeper1.keeperCollectMs - keeper0.keeperCollectMs) * 1000) / MEM_CALLS);
    console.log(`  memory keeper during the calls: ${keeperCollections} full collections, ${keeperCpuUs} µs of server CPU per call`);
    await point(`after ${MEM_CALLS.toLocaleString('en')} calls`, true);
    await Bun.sleep(2000);
    await point('2 s later', false);
    await point('2 s later', true);
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS);
    await point(RELEASED_LATER, false);
    if (smapsBefore) printSmapsGrowth(smapsBefore, smaps(c.proc.pid!));
    return { points, calls: MEM_CALLS, mode: MEM_MODE, concurrency: MEM_CONC, newConnections: MEM_NEWCONN, callsPerSec, serverCpuUs, keeperCollections, keeperCpuUs, keeper: process.env.BENCH_NO_KEEPER !== '1' };
  } finally {
    ext?.close();
    await stopChild(c);
  }
}

// ---------------------------------------------------------------- start-up (the CLI, as users start it)

const STARTUP_RUNS = Math.max(1, Math.min(50, Number(process.env.BENCH_STARTUP_RUNS ?? 7)));

/** `bun cli/main.ts start --port 0` on `dir`, as users start it; resolves once it prints its address. */
async function spawnStart(dir: string, env: Record<string, string> = {}): Promise<{ proc: ChildProcess; port: number }> {
  const bunFlags = (process.env.BENCH_BUN_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const proc = spawn(process.execPath, [...bunFlags, join(ROOT, 'cli', 'main.ts'), 'start', '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, OPENTABS_CONFIG_DIR: dir, NO_COLOR: '1', ...env },
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error('opentabs start: no address within 30 s')), 30_000);
      proc.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(buf);
        if (m) (clearTimeout(timer), resolve(Number(m[1])));
      });
      proc.once('exit', (code) => (clearTimeout(timer), reject(new Error(`opentabs start exited (${code})`))));
    });
    return { proc, port };
  } catch (e) {
    await stopStarted(proc);
    throw e;
  }
}

async function stopStarted(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r));
  if (proc.exitCode === null) proc.kill('SIGTERM');
  await Promise.race([exited, Bun.sleep(5000)]);
  if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

const secretOf = (dir: string) => (JSON.parse(readFileSync(join(dir, 'extension', 'auth.json'), 'utf8')) as { secret: string }).secret;

/** `bun cli/main.ts start --port 0` on `dir`: ms from spawn to /health answering and to every plugin tool listed. */
async function startOnce(dir: string, expectTools: number, env: Record<string, string> = {}): Promise<{ health: number; loaded: number }> {
  const t0 = performance.now();
  const { proc, port } = await spawnStart(dir, env);
  try {
    const url = `http://127.0.0.1:${port}`;
    let health = NaN;
    for (let i = 0; i < 10_000 && Number.isNaN(health); i++) {
      try {
        if ((await fetch(`${url}/health`)).ok) health = performance.now() - t0;
      } catch {
        await Bun.sleep(1);
      }
    }
    const auth = { Authorization: `Bearer ${secretOf(dir)}` };
    let loaded = NaN;
    for (let i = 0; i < 10_000 && Number.isNaN(loaded); i++) {
      const h = (await (await fetch(`${url}/health`, { headers: auth })).json()) as { pluginToolCount?: number };
      if ((h.pluginToolCount ?? 0) >= expectTools) loaded = performance.now() - t0;
      else await Bun.sleep(1);
    }
    return { health, loaded };
  } finally {
    await stopStarted(proc);
  }
}

async function benchStartup(): Promise<{ plugins: number; tools: number; runs: number; bundle: string; healthP50: number; loadedP50: number; health: number[]; loaded: number[]; firstLoaded: number; sourceHealthP50: number; sourceLoadedP50: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-bench-start-'));
  try {
    const plugins = 100;
    const each = 20;
    const paths = writePlugins(dir, plugins, each);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: paths, permissions: {}, pluginSettings: {} }));
    // `opentabs start` runs from its start-up bundle when fresh (cli/server-bundle.ts): make it so,
    // and time the sources (OPENTABS_NO_BUNDLE=1) in the same rounds.
    if (bundleStaleReason() !== null) await buildServerBundle().catch(() => {});
    const bundle = bundleStaleReason() ?? 'fresh';
    const health: number[] = [];
    const loaded: number[] = [];
    const sHealth: number[] = [];
    const sLoaded: number[] = [];
    // A user's plugin files were written long before a start; files written within FRESH_MS are
    // loaded in full until they are older (server/plugins/folder-cache.ts).
    await Bun.sleep(FRESH_MS + 100);
    // Run 0 warms up: it installs the extension folder, creates the secret and the plugin caches;
    // it is the first start after the plugins changed, reported on its own.
    let firstLoaded = 0;
    for (let run = 0; run <= STARTUP_RUNS; run++) {
      const r = await startOnce(dir, plugins * each);
      const src = await startOnce(dir, plugins * each, { OPENTABS_NO_BUNDLE: '1' });
      if (run === 0) firstLoaded = Math.round(r.loaded * 10) / 10;
      else (health.push(r.health), loaded.push(r.loaded), sHealth.push(src.health), sLoaded.push(src.loaded));
    }
    const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] * 10) / 10;
    const round = (xs: number[]) => xs.map((x) => Math.round(x * 10) / 10);
    return { plugins, tools: plugins * each, runs: STARTUP_RUNS, bundle, healthP50: p50(health), loadedP50: p50(loaded), health: round(health), loaded: round(loaded), firstLoaded, sourceHealthP50: p50(sHealth), sourceLoadedP50: p50(sLoaded) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- first calls of the built-in tools

interface FirstCalls {
  source: boolean;
  tools: number;
  firstMs: number;
  secondMs: number;
  rssBefore: number;
  rssAfter: number;
  rssReleased: number;
}

/**
 * `opentabs start` as users run it, with the fake extension connected: every built-in tool called
 * twice over REST with the same arguments (none: most are refused by their argument check, which
 * is the point). The first call of a tool pays for what is done once per tool — compiling its
 * argument validator, unless the start-up bundle carries it precompiled — and the second does not.
 * With `source`, the server runs from source (OPENTABS_NO_BUNDLE=1), which compiles at run time.
 * RSS before the calls, right after, and after the quiet-spell release.
 */
async function benchFirstCalls(source: boolean): Promise<FirstCalls> {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-bench-first-'));
  // Tools whose permission is `ask` would wait for a person: treated as `auto` here.
  const env: Record<string, string> = { OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS: '1', ...(source ? { OPENTABS_NO_BUNDLE: '1' } : {}) };
  const { proc, port } = await spawnStart(dir, env);
  let ext: WebSocket | undefined;
  try {
    for (let i = 0; i < 1000 && !existsSync(join(dir, 'extension', 'auth.json')); i++) await Bun.sleep(10);
    const secret = secretOf(dir);
    ext = await connectExtension({ port, secret } as Child);
    const headers = { Authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${port}`;
    const listing = (await (await fetch(`${base}/tools`, { headers })).json()) as { tools: { name: string; plugin: string }[] };
    const names = listing.tools.filter((t) => t.plugin === 'browser').map((t) => t.name);
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS + 1500);
    const rssBefore = rssParts(proc.pid!).rss;
    const pass = async () => {
      let total = 0;
      for (const name of names) {
        const t = performance.now();
        await (await fetch(`${base}/tools/${name}/call`, { method: 'POST', headers, body: '{"arguments":{}}' })).text();
        total += performance.now() - t;
      }
      return Math.round(total * 10) / 10;
    };
    const firstMs = await pass();
    const secondMs = await pass();
    const rssAfter = rssParts(proc.pid!).rss;
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS + 2000);
    return { source, tools: names.length, firstMs, secondMs, rssBefore, rssAfter, rssReleased: rssParts(proc.pid!).rss };
  } finally {
    ext?.close();
    await stopStarted(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

function printFirstCalls(runs: FirstCalls[]): void {
  for (const r of runs) {
    console.log(
      `first calls of the ${r.tools} built-in tools, ${r.source ? 'from source (validators compiled on first call)' : 'start-up bundle (validators precompiled)'}: ` +
        `${r.firstMs} ms for the first call of each, ${r.secondMs} ms for the second (${Math.round((r.firstMs - r.secondMs) * 10) / 10} ms once per tool); ` +
        `RSS ${r.rssBefore} → ${r.rssAfter} MB, ${r.rssReleased} MB after the quiet-spell release`,
    );
  }
}

function printMemory(m: Awaited<ReturnType<typeof benchMemory>>): void {
  const pre = m.points.find((p) => p.gc && p.label.startsWith('idle'))!;
  const idleReleased = m.points.find((p) => p.label === RELEASED_IDLE);
  const peak = Math.max(...m.points.map((p) => p.rss));
  const atEnd = m.points.find((p) => !p.gc && p.label === `after ${m.calls.toLocaleString('en')} calls`)!;
  const settled = m.points.filter((p) => p.gc).at(-1)!;
  const later = m.points.at(-1)!;
  const d = (x: number) => `${x >= 0 ? '+' : ''}${Math.round(x * 10) / 10}`;
  console.log(
    `memory (${m.calls.toLocaleString('en')} calls, ${m.mode}, ${m.concurrency} in flight${m.newConnections ? ', new connection per REST call' : ''}${m.keeper ? '' : ', memory keeper OFF'}; ${m.callsPerSec} calls/s, server CPU ${m.serverCpuUs} µs/call, of which the memory keeper's ${m.keeperCollections} full collections ${m.keeperCpuUs}): ` +
      `idle with extension ${pre.rss} MB; at the end of the calls ${atEnd.rss} MB (peak ${peak}); 2 s later, after GC ${settled.rss} MB (${d(settled.rss - pre.rss)} MB vs idle), JS heap ${settled.heapUsed} MB; ` +
      `${later.label} ${later.rss} MB (${d(later.rss - pre.rss)} vs idle${idleReleased ? `; idle after the start-up release ${idleReleased.rss} MB, ${d(later.rss - idleReleased.rss)} vs that` : ''})`,
  );
  console.log('targets: RSS after 100k calls ≤ 60 MB, after GC within 5 MB of idle; idle with the extension ≤ 50 MB');
}

function printStartup(s: Awaited<ReturnType<typeof benchStartup>>): void {
  console.log(`start-up, ${s.tools} plugin tools (${s.runs} runs, p50; start-up bundle: ${s.bundle}): spawn → /health ${s.healthP50} ms, → all tools listed ${s.loadedP50} ms (target ≤ 60 ms); runs: ${s.loaded.join(', ')}`);
  console.log(`  same from source (OPENTABS_NO_BUNDLE=1): spawn → /health ${s.sourceHealthP50} ms, → all tools listed ${s.sourceLoadedP50} ms`);
  console.log(`  the first start after the plugins were written (no plugin caches yet): all tools listed ${s.firstLoaded} ms`);
}

function writeResults(results: Record<string, unknown>, what: string): void {
  const outDir = join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `server-${what}${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nwrote ${file}`);
}

// ---------------------------------------------------------------- entry (after every declaration)

if (process.argv.includes('--child')) {
  const { startServer } = await import('../../server/serve.ts');
  const jsc = await import('bun:jsc');
  const configDir = process.argv[process.argv.indexOf('--child') + 1];
  const running = await startServer({ configDir, port: 0, installExtension: false, quiet: true, skipPermissions: false, limits: BENCH_LIMITS });
  await running.ready;
  // BENCH_NO_KEEPER=1: without the memory keeper (to compare; never in the product).
  if (process.env.BENCH_NO_KEEPER === '1') running.memory.stop();
  process.stdout.write(JSON.stringify({ port: running.port, secret: running.ctx.secret, tools: running.ctx.catalog.current().tools.length }) + '\n');
  const stop = async () => {
    await running.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  // Commands, one per line: `gc` (a full collection first, so the figure is what is retained) or
  // `mem` (as is); each answered with one JSON line of process.memoryUsage() figures.
  let pending = '';
  process.stdin.on('data', (c: Buffer) => {
    pending += c.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const cmd = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (cmd === 'gc') Bun.gc(true);
      if (cmd === 'eden') jsc.edenGC();
      if (cmd === 'counts' || cmd === 'eden') {
        // Diagnostics: live-cell counts by type (no collection: promoted garbage still counts).
        process.stdout.write(JSON.stringify({ cmd, counts: (jsc.heapStats() as { objectTypeCounts: Record<string, number> }).objectTypeCounts }) + '\n');
        continue;
      }
      const m = process.memoryUsage();
      // The allocator's own figures (mimalloc: bytes in use, bytes committed) and the JS heap's capacity.
      const mi = jsc.memoryUsage() as { current: number; currentCommit: number };
      const hs = jsc.heapStats() as { heapCapacity: number };
      process.stdout.write(
        JSON.stringify({
          cmd,
          rss: m.rss,
          heapUsed: m.heapUsed,
          external: m.external,
          arrayBuffers: m.arrayBuffers,
          mallocInUse: mi.current,
          mallocCommitted: mi.currentCommit,
          heapCapacity: hs.heapCapacity,
          keeperCollections: running.memory.collections,
          keeperCollectMs: running.memory.collectMs,
        }) + '\n',
      );
    }
  });
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
} else if (process.argv.includes('--first-calls')) {
  if (bundleStaleReason() !== null) await buildServerBundle().catch(() => {});
  const results: Record<string, unknown> = { date: new Date().toISOString(), bun: Bun.version, cpus: navigator.hardwareConcurrency, loadavg: loadavg() };
  const runs = [await benchFirstCalls(false), await benchFirstCalls(true)];
  printFirstCalls(runs);
  results.firstCalls = runs;
  writeResults(results, 'first-calls-');
} else if (process.argv.includes('--memory-mixed')) {
  const { benchMixedMemory, printMixedMemory } = await import('./lib/mixed-memory.ts');
  const results: Record<string, unknown> = { date: new Date().toISOString(), bun: Bun.version, cpus: navigator.hardwareConcurrency, loadavg: loadavg() };
  if (bundleStaleReason() !== null) await buildServerBundle().catch(() => {});
  printMixedMemory((results.mixedMemory = await benchMixedMemory()) as Awaited<ReturnType<typeof benchMixedMemory>>);
  console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  writeResults(results, 'memory-mixed-');
} else if (process.argv.includes('--memory') || process.argv.includes('--startup')) {
  const results: Record<string, unknown> = { date: new Date().toISOString(), bun: Bun.version, cpus: navigator.hardwareConcurrency, loadavg: loadavg() };
  if (process.argv.includes('--memory')) printMemory((results.memory = await benchMemory()) as Awaited<ReturnType<typeof benchMemory>>);
  if (process.argv.includes('--startup')) printStartup((results.startup = await benchStartup()) as Awaited<ReturnType<typeof benchStartup>>);
  console.log(`load average: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  writeResults(results, process.argv.includes('--memory') ? 'memory-' : 'startup-');
} else {
  await main();
}
