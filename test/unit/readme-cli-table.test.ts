/**
 * README's CLI table against the CLI itself: every command `opentabs --help` lists has a row, and
 * every option a row shows is one the command's (or its subcommands') --help documents.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

setDefaultTimeout(120_000);

const ROOT = join(import.meta.dir, '..', '..');
const MAIN = join(ROOT, 'cli', 'main.ts');

function help(args: string[]): string {
  const r = Bun.spawnSync([process.execPath, MAIN, ...args, '--help'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  expect({ args, code: r.exitCode }).toEqual({ args, code: 0 });
  return r.stdout.toString();
}

/** First cells of the table under "## The CLI". */
function readmeRows(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## The CLI'), readme.indexOf('\n## ', readme.indexOf('\n## The CLI') + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `opentabs'))
    .map((l) => l.slice(2, l.search(/` \| /) + 1).replace(/\\\|/g, '|'));
}

test('every command of `opentabs --help` has a row in the README CLI table', () => {
  const commands = [...help([]).matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]);
  expect(commands.length).toBeGreaterThan(10);
  const named = new Set(readmeRows().flatMap((cell) => [...cell.matchAll(/opentabs ([a-z]+)/g)].map((m) => m[1])));
  expect(commands.filter((c) => !named.has(c))).toEqual([]);
});

test("every option in a README CLI row is one that command's --help documents", () => {
  const missing: string[] = [];
  for (const cell of readmeRows()) {
    const commands = [...new Set([...cell.matchAll(/opentabs ([a-z]+)/g)].map((m) => m[1]))];
    let text = '';
    for (const cmd of commands) {
      const group = help([cmd]);
      text += group;
      // A group's help lists its subcommands as `opentabs <cmd> <sub> …`: their options count too.
      for (const sub of new Set([...group.matchAll(new RegExp(`opentabs ${cmd} ([a-z][a-z-]*)`, 'g'))].map((m) => m[1]))) text += help([cmd, sub]);
    }
    for (const flag of new Set(cell.match(/--[a-z][a-z-]*/g) ?? [])) if (!text.includes(flag)) missing.push(`${cell}: ${flag}`);
  }
  expect(missing).toEqual([]);
});

test("every option on a command's Usage line is in its README CLI row (--port is described once below the table)", () => {
  const missing: string[] = [];
  for (const cell of readmeRows()) {
    for (const cmd of new Set([...cell.matchAll(/opentabs ([a-z]+)/g)].map((m) => m[1]))) {
      const usage = help([cmd]).split('\n')[0];
      for (const flag of new Set(usage.match(/--[a-z][a-z-]*/g) ?? [])) if (flag !== '--port' && !cell.includes(flag)) missing.push(`opentabs ${cmd}: ${flag}`);
    }
  }
  expect(missing).toEqual([]);
});
