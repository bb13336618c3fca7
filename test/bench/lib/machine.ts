/**
 * Whether a throughput window was CPU-bound, from /proc: how busy all cores were (every process
 * on the machine, other work included), the bench's own processes' share of the cores, context
 * switches per call, and the busiest single thread among the bench's processes. A window with
 * idle cores and no thread near a whole core is bound by wake-up latency, not by CPU.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { cpuMsOf } from './proc.ts';

/** USER_HZ: /proc/stat and /proc/<pid>/stat count clock ticks of 10 ms. */
const TICKS_PER_SECOND = 100;

interface MachineStat {
  /** All ticks of all cores, and the idle (idle + iowait) part. */
  total: number;
  idle: number;
  contextSwitches: number;
}

function machineStat(): MachineStat {
  const text = readFileSync('/proc/stat', 'utf8');
  const cpu = text.slice(0, text.indexOf('\n')).trim().split(/\s+/).slice(1).map(Number);
  const ctxt = /^ctxt (\d+)$/m.exec(text);
  return { total: cpu.reduce((a, b) => a + b, 0), idle: (cpu[3] ?? 0) + (cpu[4] ?? 0), contextSwitches: Number(ctxt?.[1] ?? 0) };
}

/** Ticks (user + system) of each thread of `pids`, by "pid/tid", with "group: thread name". */
function threadTicks(groups: Map<number, string>): Map<string, { name: string; ticks: number }> {
  const out = new Map<string, { name: string; ticks: number }>();
  for (const [pid, group] of groups) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(`${pid}/${tid}`, { name: `${group}: ${comm}`, ticks: Number(f[11]) + Number(f[12]) });
      } catch {}
    }
  }
  return out;
}

export interface MachineWindow {
  cores: number;
  /** Share of all cores busy (0–1), every process on the machine. */
  busy: number;
  /** Share of all cores the bench's processes used (0–1). */
  ours: number;
  contextSwitchesPerCall: number;
  /** The bench's busiest thread and the share of one core it used. */
  busiestThread: { name: string; core: number };
}

/** `fn` (which makes `calls` calls) run while the machine, the bench's processes and their threads are read before and after. */
export async function machineDuring<T>(groups: Map<number, string>, calls: number, fn: () => Promise<T>): Promise<{ value: T; machine: MachineWindow }> {
  const m0 = machineStat();
  const t0 = threadTicks(groups);
  const ours0 = [...groups.keys()].reduce((a, pid) => a + cpuMsOf(pid), 0);
  const started = performance.now();
  const value = await fn();
  const seconds = (performance.now() - started) / 1000;
  const m1 = machineStat();
  const t1 = threadTicks(groups);
  const ours1 = [...groups.keys()].reduce((a, pid) => a + cpuMsOf(pid), 0);
  const cores = cpus().length;
  let busiest = { name: '', core: 0 };
  for (const [key, t] of t1) {
    const core = (t.ticks - (t0.get(key)?.ticks ?? t.ticks)) / TICKS_PER_SECOND / seconds;
    if (core > busiest.core) busiest = { name: t.name, core };
  }
  const total = m1.total - m0.total;
  return {
    value,
    machine: {
      cores,
      busy: total > 0 ? 1 - (m1.idle - m0.idle) / total : 0,
      ours: (ours1 - ours0) / 1000 / seconds / cores,
      contextSwitchesPerCall: (m1.contextSwitches - m0.contextSwitches) / calls,
      busiestThread: busiest,
    },
  };
}
