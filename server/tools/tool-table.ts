/**
 * README's table of built-in tools, rendered from the declarations (server/protocol/browser-tools/):
 * one row per group, each tool with its default permission when not `auto`. `npm run docs:tools`
 * rewrites the table in README.md between its markers; test/unit/readme-tool-table.test.ts fails
 * when README differs from what this renders.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_GROUPS, type BuiltinGroup } from '../protocol/browser-tools/declare.ts';
import { BROWSER_TOOLS } from './browser-catalog.ts';

export const TABLE_START = '<!-- tool-table:start (npm run docs:tools) -->';
export const TABLE_END = '<!-- tool-table:end -->';

const GROUP_LABEL: Partial<Record<BuiltinGroup, string>> = { acting: 'acting (trusted input via the debugger)' };

export function renderToolTable(): string {
  const rows = BUILTIN_GROUPS.map((g) => {
    const tools = BROWSER_TOOLS.filter((t) => t.group === g).map((t) => `\`${t.name}\`${t.defaultPermission === 'auto' ? '' : ` (${t.defaultPermission})`}`);
    return tools.length ? `| ${GROUP_LABEL[g] ?? g} | ${tools.join(', ')} |` : null;
  }).filter((r): r is string => r !== null);
  return ['| group | tools |', '|---|---|', ...rows].join('\n');
}

/** The table as README.md holds it now (between the markers), or null when the markers are missing. */
export function readmeToolTable(readme: string): string | null {
  const a = readme.indexOf(TABLE_START);
  const b = readme.indexOf(TABLE_END);
  if (a < 0 || b < a) return null;
  return readme.slice(a + TABLE_START.length, b).trim();
}

if (import.meta.main) {
  const path = join(import.meta.dir, '..', '..', 'README.md');
  const readme = readFileSync(path, 'utf8');
  if (readmeToolTable(readme) === null) {
    console.error(`README.md has no ${TABLE_START} … ${TABLE_END} markers around the tool table.`);
    process.exit(1);
  }
  const next = readme.slice(0, readme.indexOf(TABLE_START) + TABLE_START.length) + '\n' + renderToolTable() + '\n' + readme.slice(readme.indexOf(TABLE_END));
  // Write beside and rename: README is never left half written.
  writeFileSync(`${path}.tmp`, next);
  renameSync(`${path}.tmp`, path);
  console.log(`README.md tool table: ${BROWSER_TOOLS.length} tools in ${BUILTIN_GROUPS.length} groups`);
}
