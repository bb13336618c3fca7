/**
 * Every command's `--help` usage line names every option the command's parser accepts (long form,
 * or the short one): the options each command passes to parse() in cli/commands/*.ts are read from
 * the source, and `opentabs <command> --help` is run as a subprocess.
 */
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, removeDir, runCli, tempDir } from './cli-support.ts';
import { CLIENTS } from '../../cli/setup/clients.ts';

// Each command runs as its own process on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const cfg = tempDir('opentabs-cli-w5-help-');
afterAll(() => removeDir(cfg));

interface Parsed {
  command: string;
  options: { name: string; short?: string }[];
}

/** `parse(argv, { … }, 'command')` calls in the command modules. */
function parsedOptions(): Parsed[] {
  const dir = join(ROOT, 'cli', 'commands');
  const found: Parsed[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const src = readFileSync(join(dir, file), 'utf8');
    for (const m of src.matchAll(/\bparse\(\s*argv,\s*(\{[\s\S]*?\})\s*,\s*(?:'([^']+)'|(\w+))\s*,?\s*\)/g)) {
      const options = [...m[1]!.matchAll(/(?:'([a-z-]+)'|([a-z][a-zA-Z-]*))\s*:\s*\{\s*type:\s*'\w+'(?:,\s*short:\s*'(\w)')?/g)].map((o) => ({ name: (o[1] ?? o[2])!, ...(o[3] ? { short: o[3] } : {}) }));
      // approve.ts builds `approve` and `deny` from one function, named by its `verb`; setup.ts
      // parses `setup <client>` for every client but OpenCode (its own call) by one named `cmd`.
      const commands =
        m[2] !== undefined ? [m[2]] : m[3] === 'verb' ? ['approve', 'deny'] : m[3] === 'cmd' && file === 'setup.ts' ? Object.keys(CLIENTS).filter((id) => id !== 'opencode').map((id) => `setup ${id}`) : [];
      expect(commands.length).toBeGreaterThan(0);
      // An option spread in for one client only (`...(spec.id === 'vscode' ? { insiders: … } : {})`).
      const onlyFor = new Map([...m[1]!.matchAll(/spec\.id === '([a-z-]+)' \? \{ '?([a-z-]+)'?:/g)].map((c) => [c[2]!, `setup ${c[1]}`]));
      // --project/--dir of a client with no project file are refused with a message, not offered.
      const offered = (command: string, name: string): boolean => {
        const client = CLIENTS[command.replace(/^setup /, '') as keyof typeof CLIENTS];
        return !(client && !client.projectFile && (name === 'project' || name === 'dir'));
      };
      for (const command of commands) found.push({ command, options: options.filter((o) => (onlyFor.get(o.name) ?? command) === command && offered(command, o.name)) });
    }
  }
  return found;
}

test('each command --help usage line names every option it takes', async () => {
  const all = parsedOptions();
  // The scan found the commands (and their options) it is meant to check.
  expect(all.map((p) => p.command)).toEqual(expect.arrayContaining(['logs', 'start', 'audit', 'config set', 'plugin create', 'tool call', 'approve', 'deny']));
  expect(all.find((p) => p.command === 'logs')!.options.map((o) => o.name)).toEqual(expect.arrayContaining(['follow', 'lines', 'port']));
  const missing: string[] = [];
  for (const { command, options } of all) {
    const r = await runCli([...command.split(' '), '--help'], { configDir: cfg });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`Usage: opentabs ${command}`)).toBe(true);
    const usage = r.stdout.split('\n\n')[0]!;
    for (const o of options) {
      const named = usage.includes(`--${o.name}`) || (o.short !== undefined && new RegExp(`(^|[\\s\\[])-${o.short}\\b`).test(usage));
      if (!named) missing.push(`${command}: --${o.name}`);
    }
  }
  expect(missing).toEqual([]);
});
