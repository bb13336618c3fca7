import pkg from './package.json' with { type: 'json' };

/**
 * The SDK version recorded in tools.json (sdkVersion) and in each AdapterHandle. Read from the
 * SDK's own package.json so the SDK stays a self-contained package; server/version.ts re-exports it.
 */
export const SDK_VERSION: string = pkg.version;
