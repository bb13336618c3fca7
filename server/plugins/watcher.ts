/**
 * Dev-mode watcher for local plugins: fs.watch on each plugin's dist/ for speed, plus mtime
 * polling (WATCH_POLL_INTERVAL_MS) because fs.watch misses events on some filesystems and cannot
 * watch a dist/ folder that does not exist yet ("pending" until the first build).
 */
import { watch, statSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export interface WatcherStatus {
  watchedPlugins: number;
  pendingPlugins: number;
  lastPollAt: number | null;
  pollDetections: number;
}

/** Files whose change means "rebuilt". */
const WATCHED_FILES = ['tools.json', 'adapter.js'];
/** Builds write adapter.js then tools.json; wait for writes to settle before reloading. */
const SETTLE_MS = 120;

function signature(dir: string): string {
  return WATCHED_FILES.map((f) => {
    try {
      const s = statSync(join(dir, 'dist', f));
      return `${s.mtimeMs}:${s.size}`;
    } catch {
      return '-';
    }
  }).join('|');
}

export class PluginWatcher {
  private watchers = new Map<string, FSWatcher>();
  private signatures = new Map<string, string>();
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  private poller: ReturnType<typeof setInterval> | null = null;
  private lastPollAt: number | null = null;
  private pollDetections = 0;
  private paths: string[] = [];

  constructor(
    private readonly onChange: (pluginDir: string) => void,
    private readonly intervalMs: number,
  ) {}

  get running(): boolean {
    return this.poller !== null;
  }

  /** Set the folders to watch (called after every discovery). */
  setPaths(paths: string[]): void {
    this.paths = [...new Set(paths)];
    for (const [p, w] of this.watchers) {
      if (!this.paths.includes(p)) {
        w.close();
        this.watchers.delete(p);
        this.signatures.delete(p);
      }
    }
    if (this.running) for (const p of this.paths) this.attach(p);
  }

  start(): void {
    if (this.poller) return;
    for (const p of this.paths) this.attach(p);
    this.poller = setInterval(() => this.poll(), this.intervalMs);
    // Never keep the process alive just for the poller.
    (this.poller as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  status(): WatcherStatus {
    return {
      watchedPlugins: this.watchers.size,
      // Only meaningful while watching (dev mode); otherwise nothing is pending.
      pendingPlugins: this.running ? this.paths.filter((p) => !this.watchers.has(p)).length : 0,
      lastPollAt: this.lastPollAt,
      pollDetections: this.pollDetections,
    };
  }

  private attach(dir: string): void {
    if (!this.signatures.has(dir)) this.signatures.set(dir, signature(dir));
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(join(dir, 'dist'), { persistent: false }, (_event, file) => {
        if (!file || WATCHED_FILES.includes(String(file))) this.schedule(dir);
      });
      w.on('error', () => {
        w.close();
        this.watchers.delete(dir);
      });
      this.watchers.set(dir, w);
    } catch {
      // dist/ does not exist yet: the poller attaches once it appears.
    }
  }

  private poll(): void {
    this.lastPollAt = Date.now();
    for (const dir of this.paths) {
      const sig = signature(dir);
      const before = this.signatures.get(dir);
      if (before !== undefined && sig !== before && !this.timers.has(dir)) {
        this.pollDetections++;
        this.schedule(dir);
      }
      if (!this.watchers.has(dir)) this.attach(dir);
    }
  }

  private schedule(dir: string): void {
    const prev = this.timers.get(dir);
    if (prev) clearTimeout(prev);
    this.timers.set(
      dir,
      setTimeout(() => {
        this.timers.delete(dir);
        const sig = signature(dir);
        if (sig === this.signatures.get(dir)) return;
        this.signatures.set(dir, sig);
        this.onChange(dir);
      }, SETTLE_MS),
    );
  }
}
