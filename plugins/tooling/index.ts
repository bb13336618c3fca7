/** Plugin tooling called by the CLI (`opentabs plugin create|build`). */
export { buildPlugin, manifestFromDefinition, PluginBuildError } from './build.ts';
export type { BuildOptions, BuildResult, WatchHandle } from './build.ts';
export { createPlugin } from './create.ts';
export type { CreateOptions, CreateResult } from './create.ts';
export { notifyServerReload } from './reload.ts';
