/**
 * The stdio client config `opentabs start` prints runs as a desktop-launched client runs it: with
 * `opentabs` on the shell's PATH (npm link) the config still names an absolute command, and that
 * command, spawned with a launcher's bare PATH (/usr/bin:/bin: no npm global bin), answers
 * initialize through the running server.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { MAIN, collect, jsonBlocks, killPid, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let root: string;
let cfg: string;
let bin: string;
let pid = 0;

beforeAll(async () => {
  root = tempDir();
  cfg = join(root, 'config');
  bin = join(root, 'bin');
  mkdirSync(bin);
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

test('with opentabs on PATH, the printed stdio config is absolute and runs with a bare PATH', async () => {
  const shown = await runCli(['start', '--show-config'], { configDir: cfg, env: { PATH: `${bin}:${process.env.PATH}` } });
  expect(shown.code).toBe(0);
  // opentabs is on PATH here: the other suggested commands use the short form.
  expect(shown.stdout).toMatch(/`OPENTABS_CONFIG_DIR=\S+ opentabs start --show-config`/);
  const block = /Stdio-only clients[^\n]*\n(\{[\s\S]*?\n\})/.exec(shown.stdout)?.[1];
  expect(block).toBeDefined();
  const server = (jsonBlocks(`${block}\n`)[0] as { mcpServers: { opentabs: { command: string; args: string[]; env?: Record<string, string> } } }).mcpServers.opentabs;
  expect(isAbsolute(server.command)).toBe(true);
  expect(existsSync(server.command)).toBe(true);
  expect(server.env?.OPENTABS_CONFIG_DIR).toBe(cfg);

  // As a desktop launcher starts it: the entry's own env over a bare PATH, nothing else.
  const bridge = Bun.spawn([server.command, ...server.args], {
    env: { PATH: '/usr/bin:/bin', HOME: root, ...server.env },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const stdout = collect(bridge.stdout);
  const stderr = collect(bridge.stderr);
  try {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'desktop', version: '1' } } };
    bridge.stdin.write(`${JSON.stringify(init)}\n`);
    await bridge.stdin.flush();
    const answer = await stdout.until(/"id":1[,}][\s\S]*\n/, 60_000);
    expect({ answered: answer !== null, stderr: answer ? '' : stderr.text() }).toEqual({ answered: true, stderr: '' });
    expect(stdout.text()).toContain('"serverInfo"');
  } finally {
    bridge.stdin.end();
    const timer = setTimeout(() => bridge.kill('SIGKILL'), 15_000);
    await bridge.exited;
    clearTimeout(timer);
  }
});
