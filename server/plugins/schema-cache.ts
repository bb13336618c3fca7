/**
 * Plugin manifests whose JSON Schemas were already checked, remembered across runs so a start
 * with many plugins does not load Ajv and compile its meta-schema (≈45 ms) just to find the same
 * schemas valid again. Keyed by the SHA-256 of dist/tools.json's exact text and the Ajv version;
 * only manifests whose every schema passed are recorded, so the cache can skip a check, never
 * accept what a check would refuse. A missing, unreadable or malformed cache file counts as empty.
 * Stored in <config dir>/cache/checked-manifests.json (written atomically, 0600).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../state/atomic.ts';

/** Oldest entries are dropped beyond this (a plugin rebuilt often leaves one hash per build). */
const MAX_ENTRIES = 4096;
const FILE = 'checked-manifests.json';

let ajvVersion: string | undefined;
function currentAjvVersion(): string {
  if (ajvVersion === undefined) {
    try {
      ajvVersion = String((require('ajv/package.json') as { version?: unknown }).version ?? 'unknown');
    } catch {
      ajvVersion = 'unknown';
    }
  }
  return ajvVersion;
}

/** SHA-256 (hex) of the manifest's text; Bun's one-shot hasher, ≈ 4× faster than node:crypto's here. */
export function manifestHash(toolsJsonText: string): string {
  return Bun.SHA256.hash(toolsJsonText, 'hex');
}

export class CheckedManifests {
  private readonly hashes: Set<string>;
  private dirty = false;

  private constructor(
    private readonly dir: string | null,
    hashes: string[],
  ) {
    this.hashes = new Set(hashes);
  }

  /** An in-memory cache (CLI commands and tests that must not write into a config dir). */
  static memory(): CheckedManifests {
    return new CheckedManifests(null, []);
  }

  static open(configDir: string): CheckedManifests {
    const dir = join(configDir, 'cache');
    try {
      const data = JSON.parse(readFileSync(join(dir, FILE), 'utf8')) as { ajv?: unknown; hashes?: unknown };
      if (data.ajv === currentAjvVersion() && Array.isArray(data.hashes) && data.hashes.every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h))) {
        return new CheckedManifests(dir, data.hashes as string[]);
      }
    } catch {}
    return new CheckedManifests(dir, []);
  }

  has(hash: string): boolean {
    return this.hashes.has(hash);
  }

  /** Record a manifest whose every schema was found valid. */
  add(hash: string): void {
    if (this.hashes.has(hash)) return;
    this.hashes.add(hash);
    this.dirty = true;
  }

  async save(): Promise<void> {
    if (!this.dirty || this.dir === null) return;
    this.dirty = false;
    const list = [...this.hashes].slice(-MAX_ENTRIES);
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(this.dir, FILE), JSON.stringify({ ajv: currentAjvVersion(), hashes: list }), 0o600);
    } catch {
      // A cache that cannot be written only costs the next start its speed.
    }
  }
}
