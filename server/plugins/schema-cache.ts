/**
 * Plugin manifests already checked, remembered across runs, so a start with many plugins does not
 * do again what gave the same answer last time:
 *   - JSON Schema validity (Ajv): loading Ajv and compiling its meta-schema costs ≈ 45 ms. Keyed
 *     by the SHA-256 of dist/tools.json's exact text and the Ajv version.
 *   - the manifest's parsed form (valibot, plugin-manifest.ts): valibot's first run over 2,000
 *     tools costs ≈ 15 ms. Keyed by the same hash and by RULES, a hash of the text of the files
 *     that define the rules (plugin-manifest.ts, match-pattern.ts, wildcard.ts) and the valibot version, so a
 *     rule that changes in any way makes every manifest be parsed again. Most manifests (every one
 *     the plugin tooling writes) parse to exactly their own JSON: for those only the hash is kept
 *     (`same`) and a hit is JSON.parse of the text just read, so the cache file stays a list of
 *     hashes (a 1 MB file of parsed copies took ≈ 8 ms to read at each start with 2,000 tools).
 *     The others keep their parsed form as JSON text (`parsed`). Not used by the single-file
 *     binary (it has no source files to hash), which parses every time.
 * Only manifests that passed every check are recorded, so the cache can skip a check, never accept
 * what a check would refuse. A missing, unreadable or malformed cache file counts as empty.
 * Stored in <config dir>/cache/checked-manifests.json (written atomically, 0600).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isCompiled } from '../cli-command.ts';
import type { ToolsJson } from '../protocol/plugin-manifest.ts';
import { readRegularFileSync } from '../protocol/regular-file.ts';
import { writeFileAtomic } from '../state/atomic.ts';

/** Oldest entries are dropped beyond this (a plugin rebuilt often leaves one hash per build). */
const MAX_ENTRIES = 4096;
const FILE = 'checked-manifests.json';
/** Part of the rules key: a file written in an older layout of `same` / `parsed` is parsed afresh once. */
const LAYOUT = 2;

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

/**
 * The files whose code decides what a manifest parses to, relative to server/: plugin-manifest.ts
 * and every module it imports (test/unit/schema-cache.test.ts follows the imports to check).
 */
export const RULE_FILES = ['protocol/plugin-manifest.ts', 'protocol/plugin-name.ts', 'protocol/match-pattern.ts', 'protocol/wildcard.ts'];
let rulesKey: string | null | undefined;
/** Hash of the parsing rules (null when they cannot be read: then parsed forms are not cached). */
function currentRulesKey(): string | null {
  if (rulesKey === undefined) {
    try {
      if (isCompiled()) throw new Error('no source files');
      const serverDir = join(import.meta.dir, '..');
      const valibot = String((require('valibot/package.json') as { version?: unknown }).version ?? '');
      rulesKey = Bun.SHA256.hash([`layout ${LAYOUT}`, `valibot ${valibot}`, ...RULE_FILES.map((f) => readFileSync(join(serverDir, f), 'utf8'))].join('\0'), 'hex');
    } catch {
      rulesKey = null;
    }
  }
  return rulesKey;
}

/** SHA-256 (hex) of the manifest's text; Bun's one-shot hasher, ≈ 4× faster than node:crypto's here. */
export function manifestHash(toolsJsonText: string): string {
  return Bun.SHA256.hash(toolsJsonText, 'hex');
}

export class CheckedManifests {
  private readonly hashes: Set<string>;
  /** Manifests whose parsed form is exactly their own JSON (the text is parsed on a hit). */
  private readonly same: Set<string>;
  /** hash → the parsed manifest as JSON text, for the others (each hit parses its own copy). */
  private readonly parsedByHash: Map<string, string>;
  /** Parsed forms looked up or added since open: the ones saved (the file holds current plugins). */
  private readonly used = new Set<string>();
  private dirty = false;

  private constructor(
    private readonly dir: string | null,
    hashes: string[],
    same: string[] = [],
    parsed: Record<string, string> = {},
  ) {
    this.hashes = new Set(hashes);
    this.same = new Set(same);
    this.parsedByHash = new Map(Object.entries(parsed));
  }

  /** An in-memory cache (CLI commands and tests that must not write into a config dir). */
  static memory(): CheckedManifests {
    return new CheckedManifests(null, []);
  }

  static open(configDir: string): CheckedManifests {
    const dir = join(configDir, 'cache');
    try {
      const data = JSON.parse(readRegularFileSync(join(dir, FILE))) as { ajv?: unknown; hashes?: unknown; rules?: unknown; same?: unknown; parsed?: unknown };
      if (data.ajv === currentAjvVersion() && isHashList(data.hashes)) {
        const rules = currentRulesKey();
        const ours = rules !== null && data.rules === rules;
        const same = ours && isHashList(data.same) ? data.same : [];
        const parsed = ours && isParsedMap(data.parsed) ? data.parsed : {};
        return new CheckedManifests(dir, data.hashes, same, parsed);
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

  /**
   * The manifest as it parsed before (a fresh copy), if it passed every check: `text` is the
   * manifest's text, whose hash is `hash`.
   */
  parsed(hash: string, text: string): ToolsJson | undefined {
    // A hit skips the schema check too: only for a manifest still recorded as checked.
    if (currentRulesKey() === null || !this.hashes.has(hash)) return undefined;
    const source = this.same.has(hash) ? text : this.parsedByHash.get(hash);
    if (source === undefined) return undefined;
    try {
      const value = JSON.parse(source) as ToolsJson;
      this.used.add(hash);
      return value;
    } catch {
      this.same.delete(hash);
      this.parsedByHash.delete(hash);
      return undefined;
    }
  }

  /** Record what a manifest (`text`, whose hash is `hash`) that passed every check parsed to. */
  addParsed(hash: string, value: ToolsJson, text: string): void {
    if (currentRulesKey() === null) return;
    this.used.add(hash);
    if (this.same.has(hash) || this.parsedByHash.has(hash)) return;
    const json = JSON.stringify(value);
    // Strict deep equality after a JSON round trip: key order aside, the parsed form is the text's JSON.
    if (Bun.deepEquals(JSON.parse(json), JSON.parse(text), true)) this.same.add(hash);
    else this.parsedByHash.set(hash, json);
    this.dirty = true;
  }

  save(): Promise<void> {
    if (!this.dirty || this.dir === null) return Promise.resolve();
    this.dirty = false;
    const dir = this.dir;
    const list = [...this.hashes].slice(-MAX_ENTRIES);
    const rules = currentRulesKey();
    const used = [...this.used];
    const same = used.filter((h) => this.same.has(h));
    const parsed = Object.fromEntries(used.flatMap((h) => (this.parsedByHash.has(h) ? [[h, this.parsedByHash.get(h)!]] : [])));
    const text = JSON.stringify({ ajv: currentAjvVersion(), hashes: list, ...(rules !== null ? { rules, same, parsed } : {}) });
    const write = (async () => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomic(join(dir, FILE), text, 0o600);
      } catch {
        // A cache that cannot be written only costs the next start its speed.
      }
    })();
    return trackCacheWrite(write);
  }
}

/** Cache files still being written: the server's stop waits for them, so a quick stop keeps them. */
const pendingWrites = new Set<Promise<void>>();
/** Count a cache file's write (it never rejects) among those the server's stop waits for. */
export function trackCacheWrite(write: Promise<void>): Promise<void> {
  pendingWrites.add(write);
  void write.finally(() => pendingWrites.delete(write));
  return write;
}
/** Every cache file being written (this one and plugins/folder-cache.ts's) is written. */
export async function manifestCacheWritten(): Promise<void> {
  await Promise.all([...pendingWrites]);
}

const isHash = (h: unknown): boolean => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h);
const isHashList = (x: unknown): x is string[] => Array.isArray(x) && x.every(isHash);

function isParsedMap(x: unknown): x is Record<string, string> {
  return typeof x === 'object' && x !== null && !Array.isArray(x) && Object.entries(x).every(([k, v]) => isHash(k) && typeof v === 'string');
}
