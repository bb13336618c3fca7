/**
 * The audit log's memory ring (the last N calls, for /audit and /health), kept as columns rather
 * than one object per call.
 *
 * Why columns: JSC's collector never moves objects. An entry object kept from each call is
 * allocated among that call's garbage, and a 16 KB heap block that holds one survivor stays
 * allocated after everything else in it is freed. With a ring of per-call objects, 20,000 calls
 * left the heap's capacity at 7.3–8.0 MB instead of 5.8 MB once they were over, and RSS 2–3 MB
 * higher (`BENCH_MEM_CALLS=20000 bun test/bench/server.ts --memory`). Columns are allocated once; a call adds numbers and references
 * to strings that already live elsewhere (the tool and plugin names of the catalog). Only a failed
 * call keeps something of its own: its error.
 */
import { AUDIT_APPROVALS, type AuditEntry, type AuditError } from './audit-entry.ts';

export class AuditRing {
  /** Call time, ms since the epoch. */
  private readonly at: Float64Array;
  private readonly durationMs: Float64Array;
  private readonly ok: Uint8Array;
  private readonly tool: string[];
  private readonly plugin: string[];
  private readonly error: (AuditError | undefined)[];
  /** 0: the call did not ask; else 1 + its index in AUDIT_APPROVALS. */
  private readonly approval: Uint8Array;
  /**
   * The timestamp text when it is not what `toISOString()` makes of `at` (entries read back from
   * a file written by hand or by an older version); undefined otherwise.
   */
  private readonly timestampText: (string | undefined)[];
  /** Slot the next entry goes to. */
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    const n = Math.max(1, capacity);
    this.at = new Float64Array(n);
    this.durationMs = new Float64Array(n);
    this.ok = new Uint8Array(n);
    this.tool = new Array<string>(n).fill('');
    this.plugin = new Array<string>(n).fill('');
    this.error = new Array<AuditError | undefined>(n).fill(undefined);
    this.approval = new Uint8Array(n);
    this.timestampText = new Array<string | undefined>(n).fill(undefined);
  }

  get size(): number {
    return this.count;
  }

  /** `e` is already clean (audit.ts cleanEntry): plain strings, a finite duration; `at` is Date.parse(e.timestamp). */
  push(e: AuditEntry, at: number = Date.parse(e.timestamp)): void {
    const i = this.next;
    this.at[i] = at;
    this.timestampText[i] = Number.isNaN(at) || new Date(at).toISOString() !== e.timestamp ? e.timestamp : undefined;
    this.durationMs[i] = e.durationMs;
    this.ok[i] = e.success ? 1 : 0;
    this.tool[i] = e.tool;
    this.plugin[i] = e.plugin;
    this.error[i] = e.error;
    this.approval[i] = e.approval === undefined ? 0 : AUDIT_APPROVALS.indexOf(e.approval) + 1;
    this.next = (i + 1) % this.at.length;
    if (this.count < this.capacity) this.count++;
  }

  /** Slot of the k-th newest entry (k = 0 is the newest). */
  private slot(k: number): number {
    const n = this.at.length;
    return (this.next - 1 - k + 2 * n) % n;
  }

  /** Entries newest first, as objects made on the way out, for those that `keep` accepts (tool, plugin, success). */
  newestFirst(limit: number, keep: (tool: string, plugin: string, success: boolean) => boolean): AuditEntry[] {
    const out: AuditEntry[] = [];
    for (let k = 0; k < this.count && out.length < limit; k++) {
      const i = this.slot(k);
      if (!keep(this.tool[i]!, this.plugin[i]!, this.ok[i] === 1)) continue;
      out.push(this.entry(i));
    }
    return out;
  }

  /** Calls, successes and the summed duration over the whole ring. */
  totals(): { total: number; success: number; durationMs: number } {
    let success = 0;
    let durationMs = 0;
    for (let k = 0; k < this.count; k++) {
      const i = this.slot(k);
      success += this.ok[i]!;
      durationMs += this.durationMs[i]!;
    }
    return { total: this.count, success, durationMs };
  }

  private entry(i: number): AuditEntry {
    const e: AuditEntry = {
      timestamp: this.timestampText[i] ?? new Date(this.at[i]!).toISOString(),
      tool: this.tool[i]!,
      plugin: this.plugin[i]!,
      success: this.ok[i] === 1,
      durationMs: this.durationMs[i]!,
    };
    const error = this.error[i];
    if (error) e.error = error;
    const approval = this.approval[i]!;
    if (approval > 0) e.approval = AUDIT_APPROVALS[approval - 1];
    return e;
  }
}
