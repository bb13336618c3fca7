/**
 * `opentabs plugin create` with a name no plugin can have, a reserved name or a --url that is not
 * a match pattern is a usage error: exit 2 with the --help hint, as every other usage error, and
 * nothing is written. The same name check holds for --from-capture.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runCli, tempDir } from './cli-support.ts';

// Each case runs the CLI as a process on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const root = tempDir('opentabs-cli-w5-create-');
afterAll(() => removeDir(root));
const cli = (args: string[]) => runCli(args, { configDir: join(root, 'cfg'), cwd: root });

test('a bad or reserved plugin name exits 2 with the usage hint; nothing is created', async () => {
  for (const [name, says] of [
    ['Bad_Name', '"Bad_Name" is not a valid plugin name'],
    ['my app', '"my app" is not a valid plugin name'],
    ['-x-', '"-x-" is not a valid plugin name'],
    ['browser', '"browser" is reserved'],
  ] as const) {
    const dir = join(root, `out-${name.replace(/\W/g, '')}`);
    const r = await cli(['plugin', 'create', '--dir', dir, '--', name]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(says);
    expect(r.stderr).toContain('plugin create --help` for usage.');
    expect(existsSync(dir)).toBe(false);
  }
});

test('a --url that is not a match pattern exits 2; a bad name with --from-capture exits 2 before the capture is read', async () => {
  const badUrl = await cli(['plugin', 'create', 'okname', '--dir', join(root, 'url'), '--url', 'app.example.com']);
  expect(badUrl.code).toBe(2);
  expect(badUrl.stderr).toContain('is not a Chrome match pattern');
  expect(existsSync(join(root, 'url'))).toBe(false);

  const capture = join(root, 'capture.json');
  writeFileSync(capture, '{}');
  const draft = await cli(['plugin', 'create', 'Bad_Name', '--dir', join(root, 'draft'), '--from-capture', capture]);
  expect(draft.code).toBe(2);
  expect(draft.stderr).toContain('"Bad_Name" is not a valid plugin name');
  expect(existsSync(join(root, 'draft'))).toBe(false);
});
