// npm's install step for this package: build the server's start-up bundle (cli/server-bundle.ts)
// with the Bun of this install (cli/find-bun.mjs). It never fails the install: without the bundle
// `opentabs start` runs the server from source, and `opentabs doctor` names the command that builds it.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bunRunArgs, findBun } from './find-bun.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const r = spawnSync(findBun(), [...bunRunArgs(), join(here, 'server-bundle.ts')], { stdio: 'inherit' });
if (r.error) process.stderr.write(`opentabs: the start-up bundle was not built (${r.error.message}); opentabs start runs the server from source.\n`);
process.exit(0);
