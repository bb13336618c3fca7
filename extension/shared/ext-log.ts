/** The extension's own log (connection changes, injection failures), a ring read by extension_get_logs. */
export type ExtLogLevel = 'debug' | 'info' | 'warning' | 'error';
export interface ExtLogEntry {
  ts: number;
  level: ExtLogLevel;
  message: string;
}

const RING_SIZE = 500;
const ring: ExtLogEntry[] = [];

export function extLog(level: ExtLogLevel, message: string): void {
  ring.push({ ts: Date.now(), level, message });
  if (ring.length > RING_SIZE) ring.splice(0, ring.length - RING_SIZE);
}

const ORDER: Record<ExtLogLevel, number> = { debug: 0, info: 1, warning: 2, error: 3 };

/** Newest last; `level` is a minimum. */
export function extLogs(level: ExtLogLevel = 'debug', limit = 100): ExtLogEntry[] {
  return ring.filter((e) => ORDER[e.level] >= ORDER[level]).slice(-limit);
}
