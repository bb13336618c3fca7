/**
 * README "Writing a plugin", followed to the letter: every line of its shell block runs as written
 * (with `opentabs` on PATH, from a fresh folder), and the tool it then calls is one the scaffold
 * has. The TypeScript example below it builds in the scaffold and gives the tool the README names.
 * No browser: a call of an existing plugin tool fails only because the extension is not connected.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, ROOT, cliEnv, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(240_000);

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = README.slice(README.indexOf('## Writing a plugin'));
const shBlock = /```sh\n([\s\S]*?)\n```/.exec(section)![1];
const tsBlock = /```ts\n([\s\S]*?)\n```/.exec(section)![1];

let root: string;
let cfg: string;
let work: string;
let bin: string;
let pid = 0;

/** A shell line without its trailing `# comment` (a # inside quotes stays). */
function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trim();
  }
  return line.trim();
}

async function sh(line: string, cwd: string): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(['sh', '-c', line], {
    cwd,
    env: cliEnv(cfg, { PATH: `${bin}:${process.env.PATH}` }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), 180_000);
  try {
    const [o, e, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, out: o + e };
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  work = join(root, 'work');
  bin = join(root, 'bin');
  mkdirSync(work);
  mkdirSync(bin);
  // `opentabs` on PATH, as after `npm link`.
  writeFileSync(join(bin, 'opentabs'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  chmodSync(join(bin, 'opentabs'), 0o755);
  const start = await runCli(['start', '--background', '--port', '0'], { configDir: cfg, timeoutMs: 120_000 });
  expect(start.code).toBe(0);
  pid = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid;
});

afterAll(async () => {
  if (pid) await killPid(pid);
  removeDir(root);
});

test("the README's plugin steps run as written, and the tool it calls is the scaffold's", async () => {
  const lines = shBlock.split('\n').map(stripComment).filter(Boolean);
  const call = lines.find((l) => l.startsWith('opentabs tool call '));
  expect(call).toBeDefined();
  let cwd = work;
  const ran: string[] = [];
  for (const line of lines) {
    // The watcher runs until stopped: it is the one line not run here.
    if (line === 'npm run dev') continue;
    const cd = /^cd (\S+)$/.exec(line);
    if (cd) {
      cwd = join(cwd, cd[1]);
      continue;
    }
    const r = await sh(line, cwd);
    ran.push(line);
    if (line === call) {
      // No browser here: the only acceptable failure is the missing extension.
      expect(r.out).not.toContain('unknown_tool');
      expect(r.out).toContain('extension_not_connected');
    } else {
      expect({ line, code: r.code, out: r.code === 0 ? '' : r.out }).toEqual({ line, code: 0, out: '' });
    }
  }
  expect(ran.some((l) => l.startsWith('opentabs plugin create'))).toBe(true);
  expect(ran.some((l) => l.startsWith('npm run add'))).toBe(true);
  const toolName = /^opentabs tool call (\S+)/.exec(call!)![1];
  const list = await runCli(['tool', 'list', '--json'], { configDir: cfg });
  const names = (JSON.parse(list.stdout) as Array<{ name: string; permission: string }>).map((t) => t.name);
  expect(names).toContain(toolName);

  // The TypeScript example, put in place of the sample, builds and gives the tool the README names.
  const named = /`opentabs tool call (\S+)[^`]*`\):\n\n```ts/.exec(section)?.[1];
  expect(named).toBeDefined();
  writeFileSync(join(cwd, 'src', 'index.ts'), `${tsBlock}\n`);
  const build = await sh('npm run build', cwd);
  expect({ code: build.code, out: build.code === 0 ? '' : build.out }).toEqual({ code: 0, out: '' });
  const after = await runCli(['tool', 'list', '--json'], { configDir: cfg });
  const tools = JSON.parse(after.stdout) as Array<{ name: string; permission: string }>;
  expect(tools.find((t) => t.name === named)).toMatchObject({ permission: 'auto' });
});
