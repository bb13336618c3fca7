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
 * Prints a table and writes bench-results/server-<timestamp>.json.
 * BENCH_PROFILE=1 also writes a CPU profile (markdown) of the call-path server to bench-results/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

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
}

/** BENCH_PROFILE=1: the call-path server child writes a markdown CPU profile to bench-results/. */
const PROFILE = process.env.BENCH_PROFILE === '1';

async function startChild(plugins: number, toolsEach: number, profile = false): Promise<Child> {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-bench-'));
  const paths = writePlugins(dir, plugins, toolsEach);
  const permissions = Object.fromEntries(paths.map((_, i) => [`bench${i}`, { default: 'auto' }]));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: paths, permissions, pluginSettings: {} }));
  const profArgs = profile ? ['--cpu-prof-md', `--cpu-prof-dir=${join(ROOT, 'bench-results')}`] : [];
  const proc = spawn(process.execPath, [...profArgs, join(import.meta.dir, 'server.ts'), '--child', dir], { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('server child did not start within 30 s')), 30_000);
    proc.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(buf.slice(0, nl));
      }
    });
    proc.on('exit', (code) => (clearTimeout(timer), reject(new Error(`server child exited (${code})`))));
  });
  const info = JSON.parse(line);
  return { proc, dir, ...info, base: `http://127.0.0.1:${info.port}` };
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

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

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
    results.idleRssMb = rssMb(calls.proc.pid!);
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
    results.afterLoadRssMb = rssMb(calls.proc.pid!);
  } finally {
    ext?.close();
    await stopChild(calls);
  }

  // ---- tools/list at 100 and 2,000 plugin tools
  for (const [plugins, each] of [
    [10, 10],
    [40, 50],
  ] as const) {
    const c = await startChild(plugins, each);
    try {
      const h = await mcpSession(c);
      const list = mcpLister(c, h, plugins * each);
      await load(100, 1, list);
      rows.push([`MCP tools/list, ${plugins * each} plugin tools (${c.tools} total)`, await measured(c, plugins * each > 1000 ? 500 : 2000, 1, list)]);
      if (plugins * each > 1000) results.idleRssMb2000Tools = rssMb(c.proc.pid!);
    } finally {
      await stopChild(c);
    }
  }

  // ---- print + write
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`\nOpenTabs server benchmark (bun ${Bun.version}, ${navigator.hardwareConcurrency} cpus)\n`);
  console.log(`${pad('scenario', 58)} ${pad('p50 ms', 9)} ${pad('p99 ms', 9)} ${pad('calls/s', 9)} ${pad('srv CPU µs/call', 16)} n`);
  for (const [name, s] of rows) {
    if (typeof s === 'string') console.log(`${pad(name, 58)} ${s}`);
    else console.log(`${pad(name, 58)} ${pad(String(s.p50), 9)} ${pad(String(s.p99), 9)} ${pad(String(s.callsPerSec), 9)} ${pad(s.serverCpuUs === undefined ? '-' : String(s.serverCpuUs), 16)} ${s.n}`);
  }
  console.log(`\nidle RSS: ${results.idleRssMb} MB (8 plugins); ${results.idleRssMb2000Tools} MB (2,000 tools); after call load: ${results.afterLoadRssMb} MB`);
  console.log('srv CPU µs/call = CPU time of the server process during the scenario / calls (the server\'s own cost, HTTP + WS included).');
  console.log('targets: server overhead ≤ 0.3 ms p50 (call p50 minus the HTTP and WS floors), ≥ 5,000 calls/s at 32 in flight over MCP, tools/list ≤ 1 ms @100 and ≤ 5 ms @2,000, idle RSS ≤ 50 MB');
  results.rows = Object.fromEntries(rows);
  const outDir = join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `server-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nwrote ${file}`);
}

// ---------------------------------------------------------------- entry (after every declaration)

if (process.argv.includes('--child')) {
  const { startServer } = await import('../../server/serve.ts');
  const configDir = process.argv[process.argv.indexOf('--child') + 1];
  const running = await startServer({ configDir, port: 0, installExtension: false, quiet: true, skipPermissions: false });
  await running.ready;
  process.stdout.write(JSON.stringify({ port: running.port, secret: running.ctx.secret, tools: running.ctx.catalog.current().tools.length }) + '\n');
  const stop = async () => {
    await running.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
} else {
  await main();
}
