/**
 * The server as the bench's child process (so its RSS and CPU are its own):
 *   bun test/bench/lib/server-child.ts <configDir> [limitsJson]
 * Prints one JSON line {port, pid, secret} once start-up discovery is done; SIGTERM stops it.
 * Limits are raised only where the shipped ones would refuse the bench's own load
 * (1,000 MCP sessions, 32 calls in flight); every figure notes which limits were used.
 */
import { runForeground } from '../../../server/serve.ts';
import type { Limits } from '../../../server/limits.ts';

const [configDir, limitsJson] = process.argv.slice(2);
if (!configDir) {
  console.error('usage: server-child.ts <configDir> [limitsJson]');
  process.exit(2);
}
let limits: Partial<Limits> = {};
try {
  limits = limitsJson ? (JSON.parse(limitsJson) as Partial<Limits>) : {};
} catch (e) {
  console.error(`bad limits JSON: ${(e as Error).message}`);
  process.exit(2);
}
const running = await runForeground({ port: 0, configDir, quiet: true, installExtension: true, limits });
await running.ready;
console.log(JSON.stringify({ port: running.port, pid: process.pid, secret: running.ctx.secret ?? '' }));
