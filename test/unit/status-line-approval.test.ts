/**
 * `opentabs tool call`'s approval wait: the command that approves the call is shown only on a
 * terminal, where a person reads it — an agent running the CLI through its shell has none, and
 * must not be handed the command that approves its own call.
 */
import { expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const module = join(import.meta.dir, '../../cli/status-line.ts');

function waitOn(tty: boolean): string {
  const script = `import { StatusLine } from ${JSON.stringify(module)};
const s = new StatusLine(${tty});
s.update({ type: 'approval', state: 'waiting', id: 'c0ffee42', expiresAt: Date.now() + 120000, timeoutMs: 120000, message: 'Waiting for approval of mail_send in the OpenTabs side panel (up to 120 s); only the user can allow it.' });
s.clear();`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } });
  expect(r.status).toBe(0);
  return r.stderr;
}

test('on a terminal: the wait and, for the person, the approve and deny commands', () => {
  const text = waitOn(true);
  expect(text).toContain('Waiting for approval of mail_send');
  expect(text).toContain('approve c0ffee42');
  expect(text).toContain('deny c0ffee42');
});

test('without a terminal (a pipe, an agent\'s shell): the wait only', () => {
  const text = waitOn(false);
  expect(text).toContain('Waiting for approval of mail_send');
  expect(text).not.toContain('c0ffee42');
});
