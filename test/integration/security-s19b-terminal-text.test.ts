/**
 * Text from a plugin package (its display name, its package.json name quoted in a load error) and
 * a tool call's arguments reach the terminal through `opentabs status`, `doctor`, `plugin list`,
 * `approvals` and `approve`. Every line the CLI prints goes through one reading (output.ts
 * terminalText): escape sequences (OSC 52 clipboard writes, OSC 8 links, erase, cursor moves), CR,
 * C1 controls, bidi controls and invisible characters (soft hyphen, joiners, tag characters,
 * fillers) are shown as \uXXXX; only the CLI's own colours stay escape sequences.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempConfigDir, startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension, writeTestConfig, writeTestPlugin } from '../harness/fake-extension.ts';
import { runCli } from './cli-support.ts';

setDefaultTimeout(90_000);

/** Clipboard write, erase screen, a hidden link, a carriage return, a right-to-left override, C1 CSI cursor up. */
const HOSTILE = '\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07\rfake\u202eXY\x9b1A';
/** Anything a terminal would obey, reorder or not show (the CLI's own colours excepted below). */
const UNSHOWN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]|\udb40[\udc00-\udc7f]/;

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  const dir = makeTempConfigDir('opentabs-s19b-term-');
  const parent = join(dir, 'plugins-here');
  const shown = writeTestPlugin(parent, 'notes', [{ name: 'save', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }], undefined, { displayName: `Notes ${HOSTILE}` });
  // A package whose name is not a plugin's: the load error quotes it.
  const odd = join(parent, 'odd');
  mkdirSync(join(odd, 'dist'), { recursive: true });
  writeFileSync(join(odd, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${HOSTILE}`, version: '1.0.0' }));
  writeTestConfig(dir, { localPlugins: [shown, odd], permissions: { notes: { default: 'ask' } } });
  srv = await startTestServer({ skipPermissions: false, configDir: dir });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close().catch(() => {});
  await srv?.stop();
});

const cli = (args: string[], env: Record<string, string | undefined> = {}) => runCli([...args, '--port', String(srv.port)], { configDir: srv.configDir, env, timeoutMs: 60_000 });

describe('plugin package text in status, doctor and plugin list', () => {
  for (const args of [['status'], ['doctor'], ['plugin', 'list']]) {
    test(`opentabs ${args.join(' ')} shows the package's escape sequences, controls and bidi characters as \\uXXXX`, async () => {
      const r = await cli(args);
      const all = r.stdout + r.stderr;
      expect(all).toContain('opentabs-plugin-');
      expect(all).not.toMatch(UNSHOWN);
      expect(all).toContain('\\u202eXY\\u009b1A');
      if (args[0] === 'plugin') expect(all).toContain('Notes \\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J\\u001b]8;;http://evil.example/\\u0007click\\u001b]8;;\\u0007\\u000dfake');
    });
  }

  test('the CLI\'s own colours stay; the package\'s sequences do not', async () => {
    const r = await cli(['status'], { NO_COLOR: undefined, FORCE_COLOR: '1' });
    expect(r.stdout).toContain('\x1b[1mServer\x1b[0m');
    expect(r.stdout.replace(/\x1b\[(?:0|1|2|31|32|33|36)m/g, '')).not.toMatch(UNSHOWN);
  });
});

describe('a waiting call\'s arguments in approvals and approve', () => {
  test('invisible characters in the arguments are shown, so the text read is the text that runs', async () => {
    // Soft hyphen, zero-width joiner, Hangul filler, a variation selector and tag characters
    // (invisible letters: "rm" written in the Unicode tag block).
    const text = `ok\u00adthen\u200dgo\u3164\ufe0f end\u{e0072}\u{e006d}`;
    const call = fetch(`${srv.url}/tools/notes_save/call`, {
      method: 'POST',
      headers: { ...srv.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { text } }),
    }).then((r) => r.status);
    for (let i = 0; i < 300 && srv.ctx.hub.confirmations.list().length === 0; i++) await Bun.sleep(20);
    const id = srv.ctx.hub.confirmations.list()[0]!.id;
    const shownAs = 'ok\\u00adthen\\u200dgo\\u3164\\ufe0f end\\udb40\\udc72\\udb40\\udc6d';
    const listed = await cli(['approvals']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toMatch(UNSHOWN);
    expect(listed.stdout).toContain(shownAs);
    const bare = await cli(['approve']);
    expect(bare.code).toBe(1);
    expect(bare.stderr).not.toMatch(UNSHOWN);
    expect(bare.stderr).toContain(shownAs);
    // --json is JSON text whose strings hold the arguments as they are.
    const json = await cli(['approvals', '--json']);
    expect(json.stdout).not.toMatch(UNSHOWN);
    expect((JSON.parse(json.stdout) as { params: { text: string } }[])[0]!.params.text).toBe(text);
    expect((await cli(['deny', id])).code).toBe(0);
    expect(await call).toBe(403);
  });
});
