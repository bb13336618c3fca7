/**
 * `bun test/bench/server.ts --memory-mixed`: the server-side shape of `npm run bench`'s memory
 * figure without a browser (≈ 1 minute). The server runs as the e2e bench runs it
 * (test/bench/lib/server-child.ts: the start-up bundle, the environment the CLI gives a server);
 * a fake extension answers every dispatch at once (a 200 KB image for screenshot tools). Load:
 * every built-in tool with three argument shapes over REST and MCP (most are refused by their
 * argument check, which is the path a first call runs), plugin calls over REST, MCP and the
 * gateway, 30,000 more REST calls, and 2,000 MCP sessions opened, listed and closed. RSS (anon /
 * file) idle with the extension after the start-up release, after each phase, and 12 s after the
 * last request (after the quiet-spell release), as `npm run bench` reads it at its end.
 * BENCH_CHILD_ENV='{"K":"V"}' adds to the server's environment (e.g. '{"BUN_JSC_useFTLJIT":"1"}').
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEMORY_RELEASE_IDLE_MS } from '../../../server/limits.ts';
import { FRESH_MS } from '../../../server/plugins/folder-cache.ts';
import { BENCH_LIMITS } from './plumbing.ts';
import { writeSyntheticPlugins } from './plugins.ts';
import { cpuMsOf, rssParts, startServerChild } from './proc.ts';

export interface MixedPoint {
  label: string;
  rss: number;
  anon: number;
  file: number;
}

export interface MixedMemory {
  points: MixedPoint[];
  requests: number;
  loadMs: number;
  serverCpuMs: number;
  childEnv: Record<string, string>;
}

const PLUGINS = 8;
const SESSIONS = 2000;

export async function benchMixedMemory(): Promise<MixedMemory> {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-bench-mixed-'));
  const childEnv = process.env.BENCH_CHILD_ENV ? (JSON.parse(process.env.BENCH_CHILD_ENV) as Record<string, string>) : {};
  const savedEnv = Object.fromEntries(Object.keys(childEnv).map((k) => [k, process.env[k]]));
  const paths = writeSyntheticPlugins(join(dir, 'src'), PLUGINS, 5);
  const permissions = Object.fromEntries(paths.map((_, i) => [`synth${i}`, { default: 'auto' }]));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: paths, permissions, pluginSettings: {}, skipPermissions: true }));
  await Bun.sleep(FRESH_MS + 100);
  Object.assign(process.env, childEnv);
  const srv = await startServerChild(dir, BENCH_LIMITS);
  for (const [k, v] of Object.entries(savedEnv)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  const points: MixedPoint[] = [];
  const point = (label: string) => {
    const p = { label, ...rssParts(srv.pid) };
    points.push(p);
    console.log(`  memory (mixed): ${label.padEnd(34)} RSS ${String(p.rss).padStart(6)} MB (anon ${p.anon}, file ${p.file})`);
  };
  let ws: WebSocket | undefined;
  try {
    ws = new WebSocket(`ws://127.0.0.1:${srv.port}/ws`, ['opentabs', srv.secret]);
    await new Promise<void>((resolve, reject) => {
      ws!.onopen = () => resolve();
      ws!.onerror = () => reject(new Error('extension connect failed'));
    });
    const image = 'A'.repeat(200_000);
    ws.onmessage = (e) => {
      const s = String(e.data);
      if (!s.includes('"tool.dispatch"')) return;
      const msg = JSON.parse(s) as { id: unknown; params: { tool?: string } };
      const value = String(msg.params.tool ?? '').includes('screenshot') ? { data: image, mimeType: 'image/png' } : { ok: true, n: 1, text: 'x'.repeat(200) };
      ws!.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { value } }));
    };
    await Bun.sleep(300);
    point('idle, extension connected');
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS + 1500);
    point('idle, after the start-up release');

    const hdr = { ...srv.auth, 'content-type': 'application/json' };
    const mcpHdr = { ...hdr, accept: 'application/json, text/event-stream' };
    let requests = 0;
    const post = async (path: string, headers: Record<string, string>, body: string) => {
      requests++;
      await (await fetch(srv.url + path, { method: 'POST', headers, body })).text();
    };
    const session = async (path: string) => {
      requests += 2;
      const init = await fetch(srv.url + path, {
        method: 'POST',
        headers: mcpHdr,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
      });
      await init.text();
      const sid = init.headers.get('mcp-session-id');
      if (!sid) throw new Error(`initialize on ${path} failed: ${init.status}`);
      const h = { ...mcpHdr, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
      await (await fetch(srv.url + path, { method: 'POST', headers: h, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).text();
      return h;
    };
    const concurrent = async (n: number, inFlight: number, fn: (i: number) => Promise<void>) => {
      let next = 0;
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (next < n) await fn(next++);
      }));
    };
    const listing = (await (await fetch(`${srv.url}/tools`, { headers: hdr })).json()) as { tools: { name: string; plugin: string }[] };
    const builtins = listing.tools.filter((t) => t.plugin === 'browser').map((t) => t.name);
    const cpu0 = cpuMsOf(srv.pid);
    const t0 = performance.now();
    const mcp = await session('/mcp');
    const gateway = await session('/mcp/gateway');
    const shapes = [{}, { tabId: 1 }, { tabId: 1, selector: '#a', text: 'hi', url: 'http://127.0.0.1/x', key: 'Enter', ref: 'e1' }];
    for (let round = 0; round < 30; round++)
      for (const name of builtins)
        for (const args of shapes) {
          await post(`/tools/${name}/call`, hdr, JSON.stringify({ arguments: args }));
          await post('/mcp', mcp, JSON.stringify({ jsonrpc: '2.0', id: round, method: 'tools/call', params: { name, arguments: args } }));
        }
    point(`after ${builtins.length} built-ins × 3 × 30, REST and MCP`);
    await concurrent(12_000, 8, async (i) => {
      const tool = `synth${i % PLUGINS}_action_0`;
      if (i % 3 === 0) await post(`/tools/${tool}/call`, hdr, `{"arguments":{"id":"${i}"}}`);
      else if (i % 3 === 1) await post('/mcp', mcp, `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"${tool}","arguments":{"id":"${i}"}}}`);
      else await post('/mcp/gateway', gateway, `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"call_tool","arguments":{"tool":"${tool}","arguments":{"id":"${i}"}}}}`);
    });
    point('after 12,000 plugin calls');
    await concurrent(30_000, 8, (i) => post(`/tools/synth${i % PLUGINS}_action_0/call`, hdr, `{"arguments":{"id":"${i}"}}`));
    point('after 30,000 more REST calls');
    for (let i = 0; i < SESSIONS; i++) {
      const path = i % 2 ? '/mcp/gateway' : '/mcp';
      const h = await session(path);
      await post(path, h, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
      requests++;
      await (await fetch(srv.url + path, { method: 'DELETE', headers: h })).text();
    }
    const loadMs = Math.round(performance.now() - t0);
    const serverCpuMs = Math.round(cpuMsOf(srv.pid) - cpu0);
    point(`after ${SESSIONS} MCP sessions`);
    await Bun.sleep(MEMORY_RELEASE_IDLE_MS + 2000);
    point(`${(MEMORY_RELEASE_IDLE_MS + 2000) / 1000} s later (quiet-spell release)`);
    return { points, requests, loadMs, serverCpuMs, childEnv };
  } finally {
    ws?.close();
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printMixedMemory(m: MixedMemory): void {
  const idle = m.points[0]!;
  const end = m.points.at(-1)!;
  const d = (x: number) => `${x >= 0 ? '+' : ''}${Math.round(x * 10) / 10}`;
  console.log(
    `memory (mixed load, ${m.requests.toLocaleString('en')} requests in ${m.loadMs} ms, server CPU ${m.serverCpuMs} ms${Object.keys(m.childEnv).length ? `, server env ${JSON.stringify(m.childEnv)}` : ''}): ` +
      `idle with the extension ${idle.rss} MB (anon ${idle.anon}, file ${idle.file}); ${end.label} ${end.rss} MB (anon ${end.anon}, file ${end.file}): ` +
      `${d(end.rss - idle.rss)} MB (anon ${d(end.anon - idle.anon)}, file ${d(end.file - idle.file)})`,
  );
  console.log('targets (as npm run bench): ≤ 60 MB after the load, within 5 MB of idle');
}
