#!/usr/bin/env node
// npm bin shim for `opentabs`. The CLI and server are TypeScript run by Bun: under Bun (bunx,
// `bun cli/bin.mjs`) import the entry directly; under Node, re-run it with the Bun binary that
// the `bun` dependency installed (cli/find-bun.mjs), passing signals and the exit code through.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bunRunArgs, findBun } from './find-bun.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, 'main.ts');

if (process.versions.bun) {
  const { runCli } = await import(entry);
  await runCli(process.argv.slice(2));
} else {
  const bun = findBun();
  // JavaScriptCore options for a server this process may become (cli/server-env.ts: same names
  // and values); one already set in the environment wins.
  const env = { ...process.env };
  if (env.BUN_JSC_useFTLJIT === undefined) env.BUN_JSC_useFTLJIT = '0';
  // The folder this runs in is anyone's (a cloned repository, an agent's workspace): its
  // bunfig.toml and .env files are not read (bunRunArgs).
  const child = spawn(bun, [...bunRunArgs(), entry, ...process.argv.slice(2)], { stdio: 'inherit', env });
  // Ctrl-C in a terminal already reaches the child (same process group): forwarding it too would
  // make the server see a second SIGINT mid-shutdown. Signals sent to this process alone are passed on.
  process.on('SIGINT', () => {
    if (!process.stdin.isTTY) child.kill('SIGINT');
  });
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (e) => {
    process.stderr.write(`opentabs: could not run Bun (${bun}): ${e.message}\nInstall Bun (https://bun.sh) or reinstall opentabs so its \`bun\` dependency is present.\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 1 : 1)));
}
