/**
 * The start-up bundle's entry (cli/server-bundle.ts builds it): the server, and the CLI that
 * starts it. Only the start command is inside; the other commands stay in their source files.
 */
export * from '../server/serve.ts';
export { runCli } from './run.ts';
