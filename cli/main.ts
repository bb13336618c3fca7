/**
 * `opentabs` entry point (`bun cli/main.ts …`; the npm shim cli/bin.mjs and the compiled binary
 * call runCli). `opentabs start` runs from the start-up bundle when it is fresh (built by
 * cli/server-bundle.ts, found and loaded by cli/bundle-load.ts): the start command, the CLI around
 * it and the server as one file of JSC bytecode, so nothing is transpiled before the port is bound. Every other command, and `start`
 * without a fresh bundle, runs from the sources (cli/run.ts); both behave the same.
 */
export async function runCli(argv: string[]): Promise<void> {
  const bundled = argv[0] === 'start' ? (await import('./bundle-load.ts')).loadBundle() : null;
  await (bundled ?? (await import('./run.ts'))).runCli(argv);
}

if (import.meta.main) await runCli(process.argv.slice(2));
