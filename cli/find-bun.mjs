// The Bun binary that runs this package's TypeScript (the CLI, the server, the start-up bundle's
// build), for the npm shim cli/bin.mjs and the install step cli/postinstall.mjs: the `bun`
// dependency's binary once its own install step has put it in place, else the binary of the
// platform package it takes it from (@oven/bun-<os>-<arch>…, there as soon as npm has unpacked it:
// before bun's install step in a global install, which runs this package's first, and with
// --ignore-scripts, which runs neither), else a `bun` on PATH.
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Bun's flags for running this package's code in any folder: Bun otherwise reads that folder's
 * bunfig.toml (a `preload` there runs the folder's code first) and its .env files (which set
 * OPENTABS_CONFIG_DIR, PATH …). cli/bun-run.toml is this package's own, empty, settings file.
 * @returns {string[]}
 */
export function bunRunArgs() {
  return ['--no-env-file', `--config=${join(dirname(fileURLToPath(import.meta.url)), 'bun-run.toml')}`];
}

/** Smaller than this, bin/bun.exe of the `bun` package is its stand-in script, not Bun (≈ 100 MB). */
const REAL_BUN_MIN_BYTES = 1024 * 1024;

function isRealBun(path) {
  try {
    return statSync(path).size >= REAL_BUN_MIN_BYTES;
  } catch {
    return false;
  }
}

/** @returns {string} */
export function findBun() {
  const require = createRequire(import.meta.url);
  let bunPackage;
  try {
    bunPackage = require.resolve('bun/package.json');
  } catch {
    return 'bun';
  }
  const exe = join(dirname(bunPackage), 'bin', 'bun.exe');
  if (isRealBun(exe)) return exe;
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch;
  const fromBun = createRequire(bunPackage);
  for (const variant of ['', '-baseline', '-musl', '-musl-baseline']) {
    let dir;
    try {
      dir = dirname(fromBun.resolve(`@oven/bun-${os}-${arch}${variant}/package.json`));
    } catch {
      continue;
    }
    const bin = join(dir, 'bin', process.platform === 'win32' ? 'bun.exe' : 'bun');
    if (isRealBun(bin)) return bin;
  }
  return existsSync(exe) ? exe : 'bun';
}
