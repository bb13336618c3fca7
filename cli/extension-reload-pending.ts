/**
 * After an update, the server tells the extension to reload itself the first time it connects
 * (server.log: `extension_reload_after_update`). One that never connects again was left off by
 * Chrome (it turns an unpacked extension off on reload while Developer mode is off): doctor says
 * so, rather than only "not connected" with how to load it.
 */
import { closeSync, constants, fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openRegularSync } from '../server/protocol/regular-file.ts';

/** How much of the end of server.log is read: the current run's start-up is well within it. */
const TAIL_BYTES = 512 * 1024;

/** When the server of `pid` told the extension to reload and it has not connected since (ISO time), else null. */
export function extensionReloadPending(dir: string, pid: number): string | null {
  let text: string;
  try {
    const fd = openRegularSync(join(dir, 'server.log'), constants.O_RDONLY);
    try {
      const size = fstatSync(fd).size;
      const start = Math.max(0, size - TAIL_BYTES);
      const buf = Buffer.alloc(size - start);
      const n = readSync(fd, buf, 0, buf.length, start);
      text = buf.subarray(0, n).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  let ours = false;
  let pending: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { ts?: unknown; event?: unknown; pid?: unknown };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    if (e.event === 'listening') {
      // A run of this server starts here; an earlier run's lines say nothing about it.
      ours = e.pid === pid;
      pending = null;
    } else if (ours && e.event === 'extension_reload_after_update') {
      pending = typeof e.ts === 'string' ? e.ts : '?';
    } else if (ours && e.event === 'extension_connected') {
      pending = null;
    }
  }
  return ours ? pending : null;
}
