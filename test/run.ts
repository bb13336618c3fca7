/**
 * `npm test`: make sure Chromium is there (browser tests never skip silently), run every test
 * with `bun test`, and end with the line CI reads: `N passed, N failed`.
 *
 *   npm test                 every test
 *   npm test -- test/unit    only some paths (any `bun test` arguments pass through)
 */
import { existsSync } from 'node:fs';
import { spawnSync, spawn } from 'node:child_process';

const CHROMIUM = process.env.OPENTABS_CHROMIUM ?? '/usr/bin/chromium';

function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    console.error(`Chromium is missing at ${CHROMIUM}: run \`sudo apt-get install -y chromium\` (or set OPENTABS_CHROMIUM) and retry.`);
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  console.log(`Chromium not found at ${CHROMIUM}; installing it with apt-get …`);
  spawnSync('apt-get', ['update'], { stdio: 'inherit' });
  const r = spawnSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0 || !existsSync(CHROMIUM)) {
    console.error('Installing Chromium failed: run `apt-get install -y chromium` by hand and retry.');
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
}

ensureChromium();

const args = process.argv.slice(2);
const paths = args.length > 0 ? args : ['test/unit', 'test/integration', 'test/e2e', 'test/bench'];
// bunfig's [test] timeout is not read by this Bun; pass the per-test limit explicitly (Chromium tests need room).
const child = spawn(process.execPath, ['test', '--timeout', '120000', ...paths], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });

let tail = '';
const keep = (chunk: Buffer) => {
  tail = (tail + chunk.toString()).slice(-20_000);
};
child.stdout.on('data', (c: Buffer) => {
  process.stdout.write(c);
  keep(c);
});
child.stderr.on('data', (c: Buffer) => {
  process.stderr.write(c);
  keep(c);
});
child.on('close', (code) => {
  const pass = Number(/^\s*(\d+) pass\s*$/m.exec(tail)?.[1] ?? 0);
  let fail = Number(/^\s*(\d+) fail\s*$/m.exec(tail)?.[1] ?? 0);
  // A crashed runner or an error outside tests counts as a failure even without a fail line.
  if (code !== 0 && fail === 0) fail = 1;
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(code === 0 && fail === 0 ? 0 : 1);
});
