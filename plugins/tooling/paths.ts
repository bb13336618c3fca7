/** Where the tooling finds the SDK and the shared node_modules (valibot) when building a plugin. */
import { resolve } from 'node:path';

/** plugins/sdk in this checkout (aliased as @opentabs/sdk, so plugins build without installing it). */
export const SDK_DIR = resolve(import.meta.dir, '..', 'sdk');
/** The checkout's node_modules: fallback for valibot and friends when a plugin has none of its own. */
export const ROOT_NODE_MODULES = resolve(import.meta.dir, '..', '..', 'node_modules');
/** The `opentabs` CLI's Node entry in this checkout (runs the CLI with the checkout's Bun). */
export const CLI_BIN = resolve(import.meta.dir, '..', '..', 'cli', 'bin.mjs');
