/**
 * The CLI's own output (cli/output.ts): complete through a pipe, colour only on a terminal (found
 * without building Node's stdio streams) or with FORCE_COLOR, never with NO_COLOR.
 */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN, ROOT, cliEnv } from './cli-support.ts';

const cfg = mkdtempSync(join(tmpdir(), 'opentabs-cli-output-'));
afterAll(() => rmSync(cfg, { recursive: true, force: true }));
const RED = '\x1b[31m';

async function run(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { cwd: ROOT, env: cliEnv(cfg, env), stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

test('help through a pipe arrives whole, from the top level and from a command group', async () => {
  const top = await run(['--help'], {});
  expect(top.code).toBe(0);
  expect(top.stdout.startsWith('opentabs ')).toBe(true);
  // `opentabs`, or this install's absolute command when opentabs is not on PATH.
  expect(top.stdout).toMatch(/Run `([^`]*opentabs|[^`]*cli\/bin\.mjs|[^`]*--config=[^`]*main\.ts) <command> --help`/);
  expect(top.stdout.endsWith('NO_COLOR.\n')).toBe(true);
  const group = await run(['plugin', '--help'], {});
  expect(group.code).toBe(0);
  expect(group.stdout).toContain('Usage: opentabs plugin');
  expect(group.stdout.endsWith('\n')).toBe(true);
  expect(group.stdout.endsWith('\n\n')).toBe(false);
});

test('colour: none in a pipe or with NO_COLOR; on with FORCE_COLOR', async () => {
  const piped = await run(['no-such-command'], { NO_COLOR: undefined });
  expect(piped.code).toBe(2);
  expect(piped.stderr).toContain('unknown command "no-such-command"');
  expect(piped.stderr).not.toContain('\x1b[');
  const forced = await run(['no-such-command'], { NO_COLOR: undefined, FORCE_COLOR: '1' });
  expect(forced.stderr).toContain(`${RED}error:`);
  const both = await run(['no-such-command'], { NO_COLOR: '1', FORCE_COLOR: '1' });
  expect(both.stderr).not.toContain('\x1b[');
});

// util-linux `script` runs the CLI on a pseudo-terminal: the terminal check must see it.
test.skipIf(Bun.which('script') === null)('colour on a terminal, found without Node streams', async () => {
  const cmd = [process.execPath, MAIN, 'no-such-command'].map((w) => `'${w}'`).join(' ');
  const p = Bun.spawn(['script', '-qec', cmd, '/dev/null'], { cwd: ROOT, env: cliEnv(cfg, { NO_COLOR: undefined, TERM: 'xterm' }), stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const [text, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(code).toBe(2);
  expect(text).toContain(`${RED}error:`);
});

test('a reader that closes the pipe early (`| head`) ends the output quietly: exit 0, no EPIPE crash', async () => {
  // The reader closes its end at once; the CLI (tens of ms to start) then writes into a closed pipe.
  const cmd = `'${process.execPath}' '${MAIN}' --help | (exec 0<&-; sleep 0.5); echo "exit=\${PIPESTATUS[0]}" >&2`;
  const p = Bun.spawn(['bash', '-c', cmd], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  expect(code).toBe(0);
  expect(stderr).not.toContain('EPIPE');
  expect(stderr).toContain('exit=0');
});
