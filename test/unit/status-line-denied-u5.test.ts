/**
 * The status line of `opentabs tool call` when its approval is refused: "Denied." — the refusal
 * may come from `opentabs deny` in a terminal as well as from the side panel.
 */
import { expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const module = join(import.meta.dir, '../../cli/status-line.ts');

test('a denied approval does not claim the side panel denied it', () => {
  const script = `import { StatusLine } from ${JSON.stringify(module)};
const s = new StatusLine(false);
s.update({ type: 'approval', state: 'denied' });
s.clear();`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } });
  expect(r.status).toBe(0);
  expect(r.stderr).toBe('Denied.\n');
});
