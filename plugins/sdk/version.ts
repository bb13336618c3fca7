/** The SDK version recorded in tools.json (sdkVersion) and in each AdapterHandle. */
export { SDK_VERSION } from '../../server/version.ts';
