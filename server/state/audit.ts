/**
 * The audit log: every tool invocation, newest first, in a memory ring (for /audit and
 * /health) and appended to `<dir>/audit.log` as NDJSON (0600) before record() resolves.
 * The file rotates to audit.log.1 (one generation) when it would pass `rotateBytes`.
 * On open the ring refills from the tail of the file(s), reading only the last few blocks.
 */
import { appendFileSync, closeSync, fchmodSync, fdatasyncSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AUDIT_RING_SIZE } from '../limits.ts';

export interface AuditError {
  code: string;
  message: string;
  category?: string;
}

export interface AuditEntry {
  timestamp: string;
  tool: string;
  plugin: string;
  success: boolean;
  durationMs: number;
  error?: AuditError;
}

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

const DAY_MS = 24 * 60 * 60 * 1000;
/** How much of the file end to read per step when refilling the ring. */
const TAIL_CHUNK_BYTES = 64 * 1024;

export function auditPath(dir: string): string {
  return join(dir, 'audit.log');
}

/** Keep only the fields of an entry (callers may pass richer objects). */
function cleanEntry(e: AuditEntry): AuditEntry {
  const out: AuditEntry = {
    timestamp: String(e.timestamp),
    tool: String(e.tool),
    plugin: String(e.plugin),
    success: Boolean(e.success),
    durationMs: Number.isFinite(e.durationMs) ? Math.max(0, Math.round(e.durationMs)) : 0,
  };
  if (e.error) {
    out.error = { code: String(e.error.code), message: String(e.error.message) };
    if (e.error.category !== undefined) out.error.category = String(e.error.category);
  }
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

/**
 * Up to `max` entries from the end of an NDJSON file, oldest first. Reads backwards in chunks
 * so a 10 MB log costs a few reads, not a full scan.
 */
export async function readAuditTail(path: string, max: number): Promise<AuditEntry[]> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  try {
    const { size } = await fh.stat();
    let pos = size;
    let carry = Buffer.alloc(0);
    const lines: string[] = []; // newest first
    while (pos > 0 && lines.length < max) {
      const len = Math.min(TAIL_CHUNK_BYTES, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      const data = Buffer.concat([buf, carry]);
      // Split off complete lines from the end; what precedes the first newline may be a partial
      // line and is carried into the next (earlier) chunk.
      let end = data.length;
      for (let i = data.length - 1; i >= 0 && lines.length < max; i--) {
        if (data[i] === 0x0a) {
          const line = data.subarray(i + 1, end).toString('utf8');
          if (line.trim() !== '') lines.push(line);
          end = i;
        }
      }
      carry = data.subarray(0, end);
    }
    if (pos === 0 && lines.length < max && carry.length > 0) lines.push(carry.toString('utf8'));
    const out: AuditEntry[] = [];
    for (let i = lines.length - 1; i >= 0; i--) {
      const e = parseEntry(lines[i]);
      if (e) out.push(e);
    }
    return out;
  } finally {
    await fh.close();
  }
}

export class AuditLog {
  /** Oldest first; trimmed lazily to keep appends O(1) amortized. */
  private ring: AuditEntry[] = [];
  /** audit.log opened for appending. Writes are synchronous on purpose: see record(). */
  private fd: number | null = null;
  private size = 0;
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly rotateBytes: number,
    readonly ringSize: number,
  ) {}

  get path(): string {
    return auditPath(this.dir);
  }

  static async open(dir: string, rotateBytes: number, ringSize: number = AUDIT_RING_SIZE): Promise<AuditLog> {
    const log = new AuditLog(dir, rotateBytes, ringSize);
    let entries = await readAuditTail(log.path, ringSize);
    if (entries.length < ringSize) {
      const older = await readAuditTail(`${log.path}.1`, ringSize - entries.length);
      entries = [...older, ...entries];
    }
    log.ring = entries;
    log.openFile();
    return log;
  }

  private openFile(): void {
    const fd = openSync(this.path, 'a', 0o600);
    fchmodSync(fd, 0o600); // also for a file created by an older version or by hand
    this.size = fstatSync(fd).size;
    this.fd = fd;
  }

  private rotate(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    renameSync(this.path, `${this.path}.1`);
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
    this.ring.push(e);
    if (this.ring.length > this.ringSize * 2) this.ring = this.ring.slice(-this.ringSize);
    const line = Buffer.from(JSON.stringify(e) + '\n');
    try {
      if (this.closed) {
        // A call that finishes during shutdown still reaches the disk (no descriptor to reuse).
        appendFileSync(this.path, line, { mode: 0o600 });
        return Promise.resolve();
      }
      if (this.fd === null) this.openFile();
      if (this.size > 0 && this.size + line.length > this.rotateBytes) this.rotate();
      let off = 0;
      while (off < line.length) off += writeSync(this.fd!, line, off, line.length - off);
      this.size += line.length;
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Newest first, filtered, at most `limit` entries. */
  query(f: AuditQuery): AuditEntry[] {
    const out: AuditEntry[] = [];
    const start = Math.max(0, this.ring.length - this.ringSize);
    for (let i = this.ring.length - 1; i >= start && out.length < f.limit; i--) {
      const e = this.ring[i];
      if (f.plugin !== undefined && e.plugin !== f.plugin) continue;
      if (f.tool !== undefined && e.tool !== f.tool) continue;
      if (f.success !== undefined && e.success !== f.success) continue;
      out.push(e);
    }
    return out;
  }

  /** Aggregates over the in-memory ring (what /health reports). */
  summary(now: number = Date.now()): AuditSummary {
    let success = 0;
    let duration = 0;
    const day = { total: 0, success: 0, failure: 0 };
    const start = Math.max(0, this.ring.length - this.ringSize);
    for (let i = start; i < this.ring.length; i++) {
      const e = this.ring[i];
      if (e.success) success++;
      duration += e.durationMs;
      const t = Date.parse(e.timestamp);
      if (Number.isFinite(t) && now - t <= DAY_MS) {
        day.total++;
        if (e.success) day.success++;
        else day.failure++;
      }
    }
    const total = this.ring.length - start;
    return {
      totalInvocations: total,
      successCount: success,
      failureCount: total - success,
      last24h: day,
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
