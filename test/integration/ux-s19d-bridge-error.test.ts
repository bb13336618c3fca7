/**
 * The stdio bridge (`opentabs mcp`) is started by the MCP client. When it cannot reach a server
 * (none runs and --no-start, or the start fails because another program holds the port) it
 * exited with the reason on stderr only, and clients such as the MCP Inspector or Claude Desktop
 * showed "Connection closed". It now answers the client's request with a JSON-RPC error that
 * carries the reason, then exits 1.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { collect, removeDir, runCli, tempDir } from './cli-support.ts';

setDefaultTimeout(180_000);

let dir: string;
let holder: ReturnType<typeof Bun.spawn> | undefined;
let holderPort = 0;

const INIT = `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ux-s19d', version: '1' } } })}\n`;

beforeAll(async () => {
  dir = tempDir();
  holder = Bun.spawn(
    [process.execPath, '-e', "const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('no', { status: 404 }) }); console.log('port=' + s.port);"],
    { stdout: 'pipe', stderr: 'ignore' },
  );
  holderPort = Number((await collect(holder.stdout as ReadableStream<Uint8Array>).until(/port=(\d+)/, 30_000))?.[1]);
  expect(holderPort).toBeGreaterThan(0);
});
afterAll(() => {
  holder?.kill('SIGKILL');
  removeDir(dir);
});

function answer(stdout: string): { id?: unknown; error?: { code: number; message: string } } {
  const line = stdout.split('\n').find((l) => l.trim() !== '');
  expect(line).toBeDefined();
  return JSON.parse(line!);
}

test('a start that fails on a taken port: the client gets the reason as the answer to initialize', async () => {
  const r = await runCli(['mcp', '--port', String(holderPort)], { configDir: dir, stdin: INIT, timeoutMs: 90_000 });
  expect(r.code).toBe(1);
  const a = answer(r.stdout);
  expect(a.id).toBe(7);
  expect(a.error?.code).toBe(-32603);
  expect(a.error?.message).toContain(`Could not start the OpenTabs server on http://127.0.0.1:${holderPort}`);
  expect(a.error?.message).toContain(`Port ${holderPort} is in use by another program`);
  expect(a.error?.message).not.toContain('see the error above');
  // stderr still says it, for the client's log.
  expect(r.stderr).toContain(`Port ${holderPort} is in use by another program`);
});

test('--no-start with no server: the answer says the server is not running', async () => {
  const r = await runCli(['mcp', '--no-start', '--port', '1'], { configDir: dir, stdin: INIT, timeoutMs: 60_000 });
  expect(r.code).toBe(1);
  const a = answer(r.stdout);
  expect(a.id).toBe(7);
  expect(a.error?.message).toContain('OpenTabs server is not running');
  expect(a.error?.message).toContain('With --no-start the bridge does not start it.');
});

test('nothing written on stdin: the bridge exits with the error and writes nothing to stdout', async () => {
  const r = await runCli(['mcp', '--no-start', '--port', String(holderPort)], { configDir: dir, timeoutMs: 60_000 });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain('error:');
});
