/**
 * The MCP client config files (those `opentabs setup` writes) that hold one of some keys (a client
 * token, a secret), each with the `opentabs setup` arguments that rewrite it: after a rotation,
 * the exact commands that give each client the new token.
 */
import { readFileSync, statSync } from 'node:fs';
import { clientConfigSetups } from './mcp-config.ts';

/** Client config files larger than this are not read (none of them is anywhere near it). */
const MAX_BYTES = 16 * 1024 * 1024;

export function clientConfigsHolding(keys: (string | null)[], cwd = process.cwd()): { path: string; setup: string[] }[] {
  const wanted = keys.filter((k): k is string => !!k);
  if (wanted.length === 0) return [];
  const found: { path: string; setup: string[] }[] = [];
  const seen = new Set<string>();
  for (const f of clientConfigSetups(cwd)) {
    if (seen.has(f.path)) continue;
    seen.add(f.path);
    try {
      const st = statSync(f.path);
      if (!st.isFile() || st.size > MAX_BYTES) continue;
      const text = readFileSync(f.path, 'utf8');
      if (wanted.some((k) => text.includes(k))) found.push(f);
    } catch {
      // Absent or unreadable: nothing to rewrite there.
    }
  }
  return found;
}
