/**
 * browser_snapshot's description names every state a control's line may carry, so an agent can
 * read `button Save (disabled) [e3]` from the declaration alone: the states are read from the
 * source of the line writer (extension/page/snapshot.ts), so a new state fails here until the
 * description says it.
 */
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_TOOLS } from '../../server/tools/browser-catalog.ts';

/** Written but not listed: `aria-pressed="mixed"` prints "(partly pressed)", read as pressed. */
const NOT_LISTED = new Set(['partly pressed']);

test('every state snapshotPage writes is named in the description, with the checkbox marks', () => {
  const source = readFileSync(join(import.meta.dir, '../../extension/page/snapshot.ts'), 'utf8');
  const states = new Set<string>();
  for (const push of source.matchAll(/states\.push\(([^;]*)\);/g)) for (const lit of push[1]!.matchAll(/(?:^|\?|:)\s*'([a-z -]+)'/g)) states.add(lit[1]!);
  for (const s of NOT_LISTED) states.delete(s);
  expect(states.size).toBeGreaterThanOrEqual(8);
  const description = BROWSER_TOOLS.find((t) => t.name === 'browser_snapshot')!.description;
  for (const s of states) expect({ state: s, named: description.includes(`(${s}`) }).toEqual({ state: s, named: true });
  for (const mark of ['[x]', '[-] mixed', '(x)/( )', '= "a@b.c"']) expect(description).toContain(mark);
});
