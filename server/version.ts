import pkg from '../package.json' with { type: 'json' };

/** Server version (package.json) and the SDK version plugins are built against. */
export const VERSION: string = pkg.version;
// The SDK owns its version (plugins/sdk/package.json); plugins are built against it.
export { SDK_VERSION } from '../plugins/sdk/version.ts';
/** Bumped whenever the shape of config.json changes. */
export const STATE_SCHEMA_VERSION = 1;
