/**
 * Environment given to a server process the CLI starts (`opentabs start --background`, and so the
 * stdio bridge's autostart; `cli/bin.mjs` sets the same when it runs Bun from Node). JavaScriptCore
 * reads its options from the environment once, when the process starts, so they cannot be set
 * from inside a running server.
 *
 * `BUN_JSC_useFTLJIT=0`: no top (FTL) JIT tier; functions stay at the DFG tier. After a spell of
 * load the FTL's compiled code, the compiler's own memory (it compiles on helper threads) and the
 * pages of the Bun executable that hold the compiler stay resident: ≈ 3–4 MB of RSS that
 * `Bun.shrink()` does not give back. The server's JavaScript is short request handlers between
 * I/O, not long hot loops: with and without the FTL it spends the same CPU per call over 100,000
 * calls (`bun test/bench/server.ts --memory`, BENCHMARKS.md 2026-11-28 "memory back to idle").
 *
 * A value already in the environment wins (a user can turn the FTL back on with
 * `BUN_JSC_useFTLJIT=1`).
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { BUN_JSC_useFTLJIT: '0' };

/** `env` with SERVER_ENV's settings added where `env` does not set them. */
export function withServerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const [k, v] of Object.entries(SERVER_ENV)) if (out[k] === undefined) out[k] = v;
  return out;
}
