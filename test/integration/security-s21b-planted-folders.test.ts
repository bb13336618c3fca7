/**
 * Another program of the user makes a folder where the config dir keeps a file. At
 * extension/auth.json and server.pid the server stopped with Node's words for the temp file's
 * rename ("EISDIR: illegal operation on a directory, rename '…/.auth.json.….tmp' -> …"), at
 * server.log the foreground server ran on and dropped every line of its log without a word (the
 * background start printed a stack trace), and at audit-decisions.log every answered call failed
 * its second line after a start that said nothing. Each now stops the start with one line naming
 * the file and saying to remove it, as a folder at audit.log did. A named pipe at server.pid held
 * the start for good; it is set aside as a stale server.pid is.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
const started: number[] = [];

function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
  const p = probe.port!;
  probe.stop(true);
  return p;
}

/** A config dir with a folder (holding a file, as a folder someone made would) at `name`. */
function dirWithFolderAt(name: string): string {
  const dir = join(root, name.replace(/\W/g, '-'));
  mkdirSync(join(dir, 'extension'), { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, name), { recursive: true });
  return dir;
}

beforeAll(() => {
  root = tempDir('opentabs-s21b-folders-');
});

afterAll(async () => {
  for (const pid of started) await killPid(pid);
  removeDir(root);
});

function pidOf(dir: string): number | null {
  try {
    // Never a blocking read of a named pipe left there.
    if (!lstatSync(join(dir, 'server.pid')).isFile()) return null;
    const pid = (JSON.parse(readFileSync(join(dir, 'server.pid'), 'utf8')) as { pid: number }).pid;
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

for (const name of ['extension/auth.json', 'server.pid', 'server.log', 'audit-decisions.log']) {
  test(`a folder at ${name}: the start says which file and what to do`, async () => {
    const dir = dirWithFolderAt(name);
    const path = join(dir, name);
    for (const background of [true, false]) {
      const r = await runCli(['start', ...(background ? ['--background'] : []), '--port', String(freePort())], { configDir: dir, timeoutMs: 90_000 });
      const pid = pidOf(dir);
      if (pid) started.push(pid);
      const said = `${r.stdout}${r.stderr}`;
      expect({ background, code: r.code, named: said.includes(`${path} is a folder, not a regular file`), remove: said.includes('Remove it and try again') }).toEqual({
        background,
        code: 1,
        named: true,
        remove: true,
      });
      // Not Node's words for the rename of a temp file, nor a stack trace.
      expect(said).not.toContain('EISDIR');
      expect(said).not.toMatch(/\n\s+at /);
    }
  });
}

test('a named pipe at server.pid: the server starts, and server.pid is a regular file naming it', async () => {
  const dir = join(root, 'pid-fifo');
  mkdirSync(join(dir, 'extension'), { recursive: true, mode: 0o700 });
  execFileSync('mkfifo', [join(dir, 'server.pid')]);
  const port = freePort();
  const r = await runCli(['start', '--background', '--port', String(port)], { configDir: dir, timeoutMs: 60_000 });
  const pid = pidOf(dir);
  if (pid) started.push(pid);
  expect(r.code).toBe(0);
  expect(lstatSync(join(dir, 'server.pid')).isFile()).toBe(true);
  expect((await runCli(['stop'], { configDir: dir, timeoutMs: 30_000 })).code).toBe(0);
});
