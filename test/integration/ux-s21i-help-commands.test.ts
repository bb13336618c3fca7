/**
 * `opentabs plugin <sub> --help` and `opentabs mcp … --help`, run as subprocesses with no
 * `opentabs` on PATH: every command they name is the absolute command of this install and runs as
 * printed (with --help added, so nothing is changed).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { delimiter, join } from 'node:path';
import { PRINTED, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

let root: string;
beforeAll(() => {
  root = tempDir('opentabs-ux-s21i-help-');
});
afterAll(() => removeDir(root));

/** PATH without any folder that holds an `opentabs` executable. */
const PATH_WITHOUT_OPENTABS = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((d) => d && Bun.which('opentabs', { PATH: d }) === null)
  .join(delimiter);

const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

async function runShell(line: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['sh', '-c', line], { env: { ...env, NO_COLOR: '1' }, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 45_000);
  try {
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

test('the commands named in plugin and mcp --help texts run as printed when opentabs is not on PATH', async () => {
  const cfg = join(root, 'cfg');
  const helps = [
    ['plugin'],
    ['plugin', 'list'], ['plugin', 'install'], ['plugin', 'add'], ['plugin', 'remove'], ['plugin', 'configure'],
    ['plugin', 'create'], ['plugin', 'build'],
    ['mcp'], ['mcp', '--gateway'], ['mcp', '--no-start'], ['mcp', '--gateway', '--port', '9515'],
  ];
  const named: string[] = [];
  for (const args of helps) {
    const r = await runCli([...args, '--help'], { configDir: cfg, env: { PATH: PATH_WITHOUT_OPENTABS } });
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
    expect(r.stdout).toContain('Usage: opentabs');
    for (const cmd of backticked(r.stdout)) {
      if (!/(^|\s)\/\S*(main\.ts|bin\.mjs)(\s|$)/.test(cmd) && !/(^|\s)opentabs(\s|$)/.test(cmd)) continue;
      // The absolute command of this checkout, never a bare `opentabs`.
      expect({ args, cmd, bare: /(^|\s)opentabs\s/.test(cmd) }).toEqual({ args, cmd, bare: false });
      // The form that reads no bunfig.toml or .env of the folder it is run in.
      expect(cmd).toContain(PRINTED.join(' '));
      // Placeholders (<path>, [dir], …) are cut at the first one; --help checks the rest parses.
      const runnable = cmd.replace(/\s+[^\s<[…|]*[<[…|].*$/, '');
      const ran = await runShell(`${runnable} --help`, { PATH: PATH_WITHOUT_OPENTABS, HOME: root });
      expect({ args, cmd, code: ran.code, stderr: ran.stderr }).toEqual({ args, cmd, code: 0, stderr: '' });
      expect(ran.stdout).toContain('Usage: opentabs');
      named.push(`${args.join(' ')}: ${cmd}`);
    }
  }
  // plugin add names `opentabs plugin build` and `opentabs start --dev`; mcp names `opentabs start --show-config`.
  expect(named.filter((n) => n.startsWith('plugin add:')).length).toBe(2);
  for (const m of [['mcp'], ['mcp', '--gateway'], ['mcp', '--no-start']]) {
    expect(named.filter((n) => n.startsWith(`${m.join(' ')}:`) && n.endsWith(' start --show-config')).length).toBe(1);
  }
});
