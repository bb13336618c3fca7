/**
 * The audit log: every tool invocation, newest first, in a memory ring (for /audit and
 * /health) and appended to `<dir>/audit.log` as NDJSON (0600) before record() resolves.
 * The file rotates to audit.log.1 (one generation) when it would pass `rotateBytes`.
 * On open the ring refills from the tail of the file(s), reading only the last few blocks.
 *
 * The entry of a call the user answered (allowed, always allowed, denied) is appended to
 * `<dir>/audit-decisions.log` too, which rotates on its own (to audit-decisions.log.1). audit.log
 * takes a line per call, and an agent can make thousands of cheap calls (argument errors, tools
 * that are off) a minute: they would push the call the user approved out of audit.log.1 within
 * minutes. Decisions come only as fast as the user answers cards, so that file keeps them for
 * years. `opentabs audit --file` reads the four files, each entry once.
 */
import { closeSync, fchmodSync, fdatasyncSync, fstatSync, lstatSync } from 'node:fs';
import { appendToLog, appendWhole, openLogForAppend, rotateTo } from './log-file.ts';
import { NotRegularFileError } from '../protocol/regular-file.ts';
import { stat } from './fs-async.ts';
import { join } from 'node:path';
import { AUDIT_RING_SIZE } from '../limits.ts';
import { AUDIT_APPROVALS, type AuditEntry } from './audit-entry.ts';
import { AuditRing } from './audit-ring.ts';
import { countLastDayFromFiles, DayCounter } from './audit-day.ts';
import { forEachLineFromEndSync } from './audit-tail.ts';
import { truncateText } from '../protocol/page-channel.ts';
import { printable } from '../shown-text.ts';

export type { AuditApproval, AuditEntry, AuditError } from './audit-entry.ts';

export interface AuditQuery {
  limit: number;
  plugin?: string;
  tool?: string;
  success?: boolean;
}

export interface AuditSummary {
  totalInvocations: number;
  successCount: number;
  failureCount: number;
  last24h: { total: number; success: number; failure: number };
  avgDurationMs: number;
}


export function auditPath(dir: string): string {
  return join(dir, 'audit.log');
}

/** The entries of calls the user answered, kept apart (see above). */
export function auditDecisionsPath(dir: string): string {
  return join(dir, 'audit-decisions.log');
}

/**
 * Longest text of each field an entry keeps. An error message may quote what the caller or a page
 * sent: unbounded, one call could append megabytes, hold them in the ring, and push the calls
 * before it out of audit.log.1 at the next two rotations.
 */
export const AUDIT_FIELD_MAX_CHARS = { name: 300, code: 100, message: 2_000 } as const;
const cut = (v: unknown, max: number) => truncateText(String(v), max);

/** Keep only the fields of an entry (callers may pass richer objects), each of bounded length. */
function cleanEntry(e: AuditEntry): AuditEntry {
  const out: AuditEntry = {
    timestamp: cut(e.timestamp, AUDIT_FIELD_MAX_CHARS.code),
    tool: cut(e.tool, AUDIT_FIELD_MAX_CHARS.name),
    plugin: cut(e.plugin, AUDIT_FIELD_MAX_CHARS.name),
    success: Boolean(e.success),
    durationMs: Number.isFinite(e.durationMs) ? Math.max(0, Math.round(e.durationMs)) : 0,
  };
  if (e.error) {
    out.error = { code: cut(e.error.code, AUDIT_FIELD_MAX_CHARS.code), message: cut(e.error.message, AUDIT_FIELD_MAX_CHARS.message) };
    if (e.error.category !== undefined) out.error.category = cut(e.error.category, AUDIT_FIELD_MAX_CHARS.code);
  }
  if (e.approval !== undefined && AUDIT_APPROVALS.includes(e.approval)) out.approval = e.approval;
  return out;
}

function parseEntry(line: string): AuditEntry | null {
  if (line.trim() === '') return null;
  try {
    const e = JSON.parse(line) as AuditEntry;
    if (typeof e !== 'object' || e === null || typeof e.tool !== 'string' || typeof e.timestamp !== 'string') return null;
    return cleanEntry(e);
  } catch {
    return null;
  }
}

/** Up to `max` entries from the end of an NDJSON file, oldest first. */
export function readAuditTail(path: string, max: number): AuditEntry[] {
  const out: AuditEntry[] = [];
  if (max <= 0) return out;
  let lines = 0;
  forEachLineFromEndSync(path, (line) => {
    lines++;
    const e = parseEntry(line);
    if (e) out.push(e);
    return lines < max;
  });
  return out.reverse();
}

export class AuditLog {
  /** The last `ringSize` calls, for /audit and /health. */
  private readonly ring: AuditRing;
  /** audit.log opened for appending. Writes are synchronous on purpose: see record(). */
  private fd: number | null = null;
  private size = 0;
  private closed = false;
  /** Calls per minute of the last 24 hours (auditSummary.last24h), independent of the ring's size. */
  private readonly day = new DayCounter();
  private rotatedDuringDayScan = false;
  private dayScanDone = false;
  /** Resolves once the last 24 hours already in the audit files are counted (start-up, in the background). */
  dayLoaded: Promise<void> = Promise.resolve();

  private constructor(
    readonly dir: string,
    readonly rotateBytes: number,
    readonly ringSize: number,
  ) {
    this.ring = new AuditRing(ringSize);
  }

  get path(): string {
    return auditPath(this.dir);
  }

  /**
   * `scanAfter`: start counting the last 24 hours from the files once it settles (the server
   * passes its start-up work, so a 20 MB scan never competes with listing the tools).
   */
  static async open(dir: string, rotateBytes: number, ringSize: number = AUDIT_RING_SIZE, scanAfter: Promise<unknown> = Promise.resolve()): Promise<AuditLog> {
    const log = new AuditLog(dir, rotateBytes, ringSize);
    let entries = readAuditTail(log.path, ringSize);
    if (entries.length < ringSize) {
      const older = readAuditTail(`${log.path}.1`, ringSize - entries.length);
      entries = [...older, ...entries];
    }
    for (const e of entries) log.ring.push(e);
    // A folder at audit-decisions.log would fail every answered call's second line, after the start.
    const decisions = auditDecisionsPath(dir);
    if (lstatSync(decisions, { throwIfNoEntry: false })?.isDirectory()) throw new NotRegularFileError(decisions, 'a folder', true);
    log.openFile();
    // Only the bytes that were there before this process appended: later entries are counted as
    // they are recorded. A rotation while this runs would show the same entries again as
    // audit.log.1, so the rotated generation is then not read.
    const endOffset = log.size;
    const openedAt = Date.now();
    log.dayLoaded = scanAfter
      .catch(() => {})
      .then(() => countLastDayFromFiles(log.day, log.path, endOffset, openedAt, () => !log.rotatedDuringDayScan))
      .catch(() => {})
      .finally(() => {
        log.dayScanDone = true;
      });
    return log;
  }

  private openFile(): void {
    const fd = openLogForAppend(this.path, 0o600);
    fchmodSync(fd, 0o600); // also for a file created by an older version or by hand
    this.size = fstatSync(fd).size;
    this.fd = fd;
  }

  private rotate(): void {
    if (!this.dayScanDone) this.rotatedDuringDayScan = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rotateTo(this.path);
    this.openFile();
  }

  /**
   * Adds the entry to the ring and appends it to audit.log; the bytes are written before the
   * returned promise exists. The append is one small write() to an O_APPEND descriptor (it lands
   * in the page cache, no fsync): cheaper than an async write chain on every tool call, and
   * the entry is on disk before the caller's response goes out, as the audit contract requires.
   */
  record(entry: AuditEntry): Promise<void> {
    const e = cleanEntry(entry);
    const at = Date.parse(e.timestamp);
    this.ring.push(e, at);
    this.day.add(at, e.success);
    // printable: the same JSON, with nothing a terminal would obey, reorder or hide (cat, tail -f).
    const line = Buffer.from(printable(JSON.stringify(e)) + '\n');
    try {
      if (this.closed) {
        // A call that finishes during shutdown still reaches the disk (no descriptor to reuse).
        appendToLog(this.path, line, 0o600);
      } else {
        if (this.fd === null) this.openFile();
        if (this.size > 0 && this.size + line.length > this.rotateBytes) this.rotate();
        // Whole lines only: a disk that fills up mid-line leaves no cut line behind (log-file.ts).
        appendWhole(this.fd!, line);
        this.size += line.length;
      }
      if (e.approval !== undefined) this.recordDecision(line);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The line of a call the user answered, to audit-decisions.log as well (opened for each line:
   * they come as fast as a person answers). It rotates on its own at `rotateBytes`.
   */
  private recordDecision(line: Buffer): void {
    const path = auditDecisionsPath(this.dir);
    let size = 0;
    try {
      size = lstatSync(path).size;
    } catch {}
    if (size > 0 && size + line.length > this.rotateBytes) rotateTo(path);
    appendToLog(path, line, 0o600);
  }

  /** Newest first, filtered, at most `limit` entries. */
  query(f: AuditQuery): AuditEntry[] {
    return this.ring.newestFirst(
      f.limit,
      (tool, plugin, success) => (f.plugin === undefined || plugin === f.plugin) && (f.tool === undefined || tool === f.tool) && (f.success === undefined || success === f.success),
    );
  }

  /** What /health reports: totals and average over the in-memory ring; last24h over every call of the last 24 hours. */
  summary(now: number = Date.now()): AuditSummary {
    const { total, success, durationMs: duration } = this.ring.totals();
    return {
      totalInvocations: total,
      successCount: success,
      failureCount: total - success,
      last24h: this.day.counts(now),
      avgDurationMs: total === 0 ? 0 : Math.round(duration / total),
    };
  }

  /** Waits for pending appends and pushes them to disk. */
  async flush(): Promise<void> {
    if (this.fd === null) return;
    try {
      fdatasyncSync(this.fd);
    } catch {}
  }

  /** Flush and release the file handle (server stop). */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {}
    }
  }
}

/** Size of audit.log, for `opentabs doctor` and tests. */
export async function auditFileSize(dir: string): Promise<number> {
  try {
    return (await stat(auditPath(dir))).size;
  } catch {
    return 0;
  }
}
