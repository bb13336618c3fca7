/**
 * server.pid names the one server of a config dir (`opentabs stop` and `status` find it there).
 * `opentabs start` checks it first, but two starts at the same moment both find none: both
 * servers bound their ports, both wrote the file (the last one won), and the first one ran on
 * unseen, writing the same audit log, with `opentabs stop` stopping only the other. The file is
 * now claimed: created only when absent (a temp file hard-linked to its name), so one of two
 * servers wins; the other finds the winner alive and answering with this config dir's secret, and
 * stops. A file left by a server that is gone (its pid dead, or not answering as this dir's
 * server) is set aside and the claim made again.
 */
import { existsSync, linkSync, lstatSync, renameSync, rmSync } from 'node:fs';
import { NotRegularFileError, readRegularFileSync } from '../protocol/regular-file.ts';
import { join } from 'node:path';
import { CLIENT_NONCE_HEADER, checkServerProof, randomHex } from '../protocol/handshake.ts';
import { createFileOnceSync, writeFileAtomicSync } from './atomic.ts';

export interface PidRecord {
  pid: number;
  port: number;
  startedAt: number;
}

/** How long the server named by an existing server.pid has to answer GET /ws-info. */
const HOLDER_PROBE_MS = 5_000;

export const pidFilePath = (configDir: string): string => join(configDir, 'server.pid');

function readRecord(path: string): PidRecord | null {
  try {
    // A regular file only: a named pipe there would hold the start for good (it is set aside below as a stale file is).
    const r = JSON.parse(readRegularFileSync(path)) as Partial<PidRecord>;
    return Number.isInteger(r.pid) && Number.isInteger(r.port) ? { pid: r.pid!, port: r.port!, startedAt: Number(r.startedAt) || 0 } : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process on 127.0.0.1:port proves it knows `secret` (this config dir's server). */
async function answersAsOurs(port: number, secret: string): Promise<boolean> {
  const nonce = randomHex(16);
  try {
    const res = await fetch(`http://127.0.0.1:${port}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: nonce }, signal: AbortSignal.timeout(HOLDER_PROBE_MS) });
    if (!res.ok) return false;
    return (await checkServerProof(secret, nonce, await res.json())).ok;
  } catch {
    return false;
  }
}

/**
 * Claim server.pid for this server. Returns null when claimed, else the record of the other
 * server of this config dir that holds it (alive and answering with `secret`).
 */
export async function claimPidFile(configDir: string, mine: PidRecord, secret: string): Promise<PidRecord | null> {
  const path = pidFilePath(configDir);
  const text = JSON.stringify(mine);
  // A folder is not a stale file to set aside: it is named, to be removed (it could not be removed here, and holds what its owner put there).
  if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) throw new NotRegularFileError(path, 'a folder', true);
  for (let attempt = 0; attempt < 3; attempt++) {
    const created = createFileOnceSync(path, text, 0o644);
    if (created === true) return null;
    if (created === null) break;
    const theirs = readRecord(path);
    // Another live server of this dir (in another process: in one process there is no telling).
    if (theirs && theirs.pid !== process.pid && alive(theirs.pid) && (await answersAsOurs(theirs.port, secret))) return theirs;
    // Left behind: set it aside, and put it back if it changed meanwhile (another start's fresh claim).
    const aside = `${path}.${process.pid}.${randomHex(6)}.stale`;
    try {
      renameSync(path, aside);
    } catch {
      continue;
    }
    const moved = readRecord(aside);
    if (moved && theirs && moved.pid === theirs.pid && moved.port === theirs.port && moved.startedAt === theirs.startedAt) {
      rmSync(aside, { force: true });
    } else {
      try {
        linkSync(aside, path);
      } catch {}
      rmSync(aside, { force: true });
    }
  }
  // No hard links on this filesystem, or the claim kept racing: write it as before.
  writeFileAtomicSync(path, text, undefined, { durable: false });
  return null;
}

/** On stop: remove server.pid only if it still names this server (a later server's file stays). */
export function releasePidFile(configDir: string, mine: PidRecord): void {
  const path = pidFilePath(configDir);
  if (!existsSync(path)) return;
  const r = readRecord(path);
  if (r && (r.pid !== mine.pid || r.port !== mine.port || r.startedAt !== mine.startedAt)) return;
  rmSync(path, { force: true });
}
