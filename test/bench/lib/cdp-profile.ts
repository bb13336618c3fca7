/**
 * V8 CPU profiles of Chromium targets (the extension's service worker, a page) over the DevTools
 * protocol, for `BENCH_PROFILE_EXT=1 bun test/bench/calls.ts`: Chromium is started with
 * `--remote-debugging-port=0` and writes the port to `DevToolsActivePort` in its profile dir.
 * Summaries only (self time by function, time per call), as markdown.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Target {
  type: string;
  url: string;
  webSocketDebuggerUrl: string;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The DevTools targets of a Chromium started with --remote-debugging-port=0 in `profileDir`. */
export async function devtoolsTargets(profileDir: string): Promise<Target[]> {
  const port = readFileSync(join(profileDir, 'DevToolsActivePort'), 'utf8').split('\n')[0]!.trim();
  return (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Target[];
}

/** One DevTools session on a target: send a command, get its result. */
async function session(wsUrl: string): Promise<{ send(method: string, params?: unknown): Promise<any>; close(): void }> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`DevTools socket ${wsUrl} failed`));
  });
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  ws.onmessage = (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = m.id === undefined ? undefined : waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id!);
    if (m.error) w.reject(new Error(m.error.message));
    else w.resolve(m.result);
  };
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Profile each target while `work` runs; returns one markdown summary per target. */
export async function profileTargets(targets: { label: string; target: Target }[], work: () => Promise<number>, intervalUs = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100)): Promise<string> {
  const sessions = await Promise.all(targets.map((t) => session(t.target.webSocketDebuggerUrl)));
  for (const s of sessions) {
    await s.send('Profiler.enable');
    await s.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await s.send('Profiler.start');
  }
  const calls = await work();
  const out: string[] = [];
  for (let i = 0; i < sessions.length; i++) {
    const { profile } = (await sessions[i]!.send('Profiler.stop')) as { profile: CpuProfile };
    sessions[i]!.close();
    out.push(summarizeProfile(targets[i]!.label, profile, calls));
  }
  return out.join('\n\n');
}

/** Self time by function (µs per call), busiest first; idle time left out. */
export function summarizeProfile(label: string, p: CpuProfile, calls: number, top = 30): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]!)!;
    // timeDeltas[i + 1] is the time from sample i to the next: the time spent where sample i was.
    const dt = p.timeDeltas[i + 1] ?? 0;
    const f = n.callFrame;
    if (f.functionName === '(idle)') continue;
    busy += dt;
    const file = f.url ? f.url.replace(/^.*\//, '') : '';
    const key = `${f.functionName || '(anonymous)'} ${file}${file ? `:${f.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [
    `### ${label}: ${(busy / calls).toFixed(1)} µs busy per call (${calls} calls, ${((p.endTime - p.startTime) / 1000).toFixed(0)} ms profiled)`,
    '',
    '| µs/call | % of busy | function |',
    '|---:|---:|---|',
    ...rows.map(([k, us]) => `| ${(us / calls).toFixed(1)} | ${((us / busy) * 100).toFixed(1)} | \`${k}\` |`),
  ].join('\n');
}

/**
 * Self samples by function, for a profile whose time deltas include idle time (Bun's --cpu-prof
 * records no idle node: the gap before a sample is charged to it). Counts, not time.
 */
export function summarizeSamples(label: string, p: CpuProfile, top = 30): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (const id of p.samples) {
    const f = byId.get(id)!.callFrame;
    const file = f.url ? f.url.replace(/^.*\/(node_modules\/)?/, '') : '';
    const key = `${f.functionName || '(anonymous)'} ${file}${file ? `:${f.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + 1);
  }
  const total = p.samples.length;
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [`### ${label}: ${total} samples`, '', '| samples | % | function |', '|---:|---:|---|', ...rows.map(([k, n]) => `| ${n} | ${((n / total) * 100).toFixed(1)} | \`${k}\` |`)].join('\n');
}
