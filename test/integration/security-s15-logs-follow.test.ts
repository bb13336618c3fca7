/**
 * `opentabs logs` in a terminal shows text that pages and the extension wrote: a plugin's log
 * lines (the adapter runs in the page), and server.log fields such as the reason the extension's
 * socket closed with. Escape sequences in that text (OSC 52 puts text on the clipboard, others
 * erase or rewrite lines) must be shown as \uXXXX, and a line break inside one field must not
 * print a line of its own that reads like the server's. Covered here: `--follow` with `--plugin`
 * (live lines, plain and --json), and server.log lines as `opentabs logs` formats them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TestServer } from '../harness/server.ts';
import { FakeExtension, startPluginServer } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, collect, runCli, waitFor } from './cli-support.ts';

let srv: TestServer;
let ext: FakeExtension;
const HOSTILE = 'hello \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\rfake line\x9b31m';
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

beforeAll(async () => {
  srv = await startPluginServer({ plugins: [{ name: 'docs', tools: [{ name: 'get' }] }], permissions: { docs: { default: 'auto' } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

/** `opentabs logs --plugin docs --follow`, until `marker` shows; its stdout. */
async function follow(extra: string[], marker: string): Promise<string> {
  const sessionsBefore = srv.ctx.mcp.count;
  const proc = Bun.spawn([process.execPath, MAIN, 'logs', '--plugin', 'docs', '--follow', '--port', String(srv.port), ...extra], {
    cwd: ROOT,
    env: cliEnv(srv.configDir),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    const stdout = collect(proc.stdout);
    // Live lines come over the follower's MCP session: it must be open first.
    await waitFor(() => srv.ctx.mcp.count > sessionsBefore, 30_000, 'the follower to open its MCP session');
    // Its notification stream opens a moment later; lines sent before that reach no one: send again, bounded.
    let seen: RegExpExecArray | null = null;
    for (let i = 0; i < 60 && !seen; i++) {
      ext.notify('plugin.log', { entries: [{ plugin: 'docs', level: 'info', message: `${marker} ${HOSTILE}`, ts: Date.now() }] });
      seen = await stdout.until(new RegExp(`${marker}.*fake line`), 500);
    }
    expect(seen).not.toBeNull();
    return stdout.text();
  } finally {
    proc.kill('SIGKILL');
    await proc.exited;
  }
}

describe('opentabs logs shows page text escaped', () => {
  test('--follow --plugin: a live plugin log line', async () => {
    const text = await follow([], 'live-plain');
    expect(text).not.toMatch(RAW);
    expect(text).toContain('live-plain hello \\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2K\\u000dfake line\\u009b31m');
  });

  test('--follow --plugin --json: a live plugin log line', async () => {
    const text = await follow(['--json'], 'live-json');
    expect(text).not.toMatch(RAW);
    expect(text).toContain('\\u009b31m');
  });

  test('server.log: a field with escapes and a line break stays on its line', async () => {
    // The extension's socket closes with a reason it chose: the server logs it.
    const fake = '\n2026-01-01T00:00:00.000Z INFO  approval_decided decision=allow';
    const other = await FakeExtension.connect(srv.url, srv.secret);
    (other as unknown as { ws: WebSocket }).ws.close(4000, `bye\x1b[2K${fake}`.slice(0, 120));
    await other.closed;
    await waitFor(async () => (await Bun.file(`${srv.configDir}/server.log`).text()).includes('approval_decided decision=allow'), 15_000, 'the close reason in server.log');
    const r = await runCli(['logs', '-n', '500'], { configDir: srv.configDir });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    const lines = r.stdout.split('\n');
    // No line of its own: the forged text is inside the disconnect line, its line feed shown as \n.
    expect(lines.some((l) => l.startsWith('2026-01-01T00:00:00.000Z'))).toBe(false);
    expect(lines.some((l) => l.includes('extension_disconnected') && l.includes('bye\\u001b[2K\\n2026-01-01T00:00:00.000Z INFO  approval_decided'))).toBe(true);
    const j = await runCli(['logs', '-n', '500', '--json'], { configDir: srv.configDir });
    expect(j.stdout).not.toMatch(RAW);
  });
});
