import pkg from '../package.json' with { type: 'json' };

/** Server version (package.json) and the SDK version plugins are built against. */
export const VERSION: string = pkg.version;
export const SDK_VERSION: string = pkg.version;
/** Bumped whenever the shape of config.json changes. */
export const STATE_SCHEMA_VERSION = 1;
