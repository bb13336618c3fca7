/**
 * `opentabs setup <client>` for Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex CLI and
 * Claude Desktop, in a temporary HOME: the entry is merged into the client's real file (other
 * servers, settings, comments and formatting kept), the file is read back the way the client reads
 * it, running twice changes nothing, --remove takes the entry out again, a file that does not
 * parse is refused and left alone, and the secret never lands in a file others can read. Claude
 * Code is checked with the real `claude` CLI when it is installed: `claude mcp list` connects.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import tomlParse from 'toml';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { removeDir, runCli, tempDir } from './cli-support.ts';
import { clientConfigFiles, httpEntry, mcpConfigs, renderMcpConfig } from '../../cli/mcp-config.ts';
import { applyPlan, planEdit } from '../../cli/setup/file-edit.ts';
import { STRICT_JSON } from '../../cli/setup/jsonc.ts';

setDefaultTimeout(120_000);

let root: string;
let srv: TestServer;
let n = 0;

beforeAll(async () => {
  root = tempDir('opentabs-setup-s22e-');
  const cfg = join(root, 'state');
  mkdirSync(cfg, { recursive: true });
  srv = await startTestServer({ configDir: cfg });
});
afterAll(async () => {
  await srv?.stop();
  removeDir(root);
});

/** A fresh HOME (and project folder) for one test. */
function home(): { home: string; proj: string } {
  const h = join(root, `home${++n}`);
  const proj = join(h, 'proj');
  mkdirSync(proj, { recursive: true });
  return { home: h, proj };
}

const PATH_NO_CLIENTS = '/usr/bin:/bin';

function setup(h: string, args: string[], extra: Record<string, string | undefined> = {}) {
  return runCli(['setup', ...args, '--port', String(srv.port)], {
    configDir: srv.configDir,
    cwd: join(h, 'proj'),
    env: { HOME: h, PATH: PATH_NO_CLIENTS, CLAUDE_CONFIG_DIR: undefined, CODEX_HOME: undefined, XDG_CONFIG_HOME: undefined, ...extra },
  });
}

const url = () => `${srv.url}/mcp`;
const headers = () => ({ Authorization: `Bearer ${srv.clientToken}` });
const mode = (p: string) => statSync(p).mode & 0o777;
/** VS Code reads mcp.json as JSON with comments and trailing commas: TypeScript's parser reads the same dialect. */
function parseJsonc(text: string): unknown {
  const r = ts.parseConfigFileTextToJson('mcp.json', text);
  if (r.error) throw new Error(String(r.error.messageText));
  return r.config;
}
/** Gemini CLI strips comments and then JSON.parses its settings. */
const parseGemini = (text: string): unknown => JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''));

describe('JSON clients: merged into the real file, other content kept byte for byte', () => {
  const cases = [
    { client: 'cursor', file: (h: string) => join(h, '.cursor', 'mcp.json'), key: 'mcpServers', entry: () => ({ url: url(), headers: headers() }) },
    { client: 'windsurf', file: (h: string) => join(h, '.codeium', 'windsurf', 'mcp_config.json'), key: 'mcpServers', entry: () => ({ serverUrl: url(), headers: headers() }) },
    { client: 'gemini', file: (h: string) => join(h, '.gemini', 'settings.json'), key: 'mcpServers', entry: () => ({ httpUrl: url(), headers: headers() }) },
    { client: 'claude-code', file: (h: string) => join(h, '.claude.json'), key: 'mcpServers', entry: () => ({ type: 'http', url: url(), headers: headers() }) },
  ];
  for (const c of cases) {
    test(`${c.client}: add, run again (nothing changes), --remove gives the file back as it was`, async () => {
      const { home: h } = home();
      const file = c.file(h);
      mkdirSync(join(file, '..'), { recursive: true });
      // Tabs, another server and settings around it.
      const original = `{\n\t"theme": "dark",\n\t"${c.key}": {\n\t\t"other": { "command": "x", "args": ["--y"] }\n\t},\n\t"numStartups": 7\n}\n`;
      writeFileSync(file, original);
      chmodSync(file, 0o644);
      const args = c.client === 'claude-code' ? [c.client, '--no-cli'] : [c.client];
      const r = await setup(h, args);
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Added ${c.key}.opentabs in ${file}`);
      expect(r.stdout).toContain(`Changed ${file} from mode 0644 to 0600`);
      const text = readFileSync(file, 'utf8');
      const parsed = c.client === 'gemini' ? parseGemini(text) : JSON.parse(text);
      expect(parsed).toEqual({ theme: 'dark', [c.key]: { other: { command: 'x', args: ['--y'] }, opentabs: c.entry() }, numStartups: 7 });
      // The other lines are untouched; ours is indented with the file's tabs.
      expect(text.startsWith(`{\n\t"theme": "dark",\n\t"${c.key}": {\n\t\t"other": { "command": "x", "args": ["--y"] },\n\t\t"opentabs": {\n\t\t\t`)).toBe(true);
      expect(mode(file)).toBe(0o600);
      // What setup wrote is the block --show-config prints.
      const m = mcpConfigs(srv.url, srv.clientToken, srv.configDir) as unknown as Record<string, Record<string, Record<string, unknown>>>;
      const shown = m[c.client === 'claude-code' ? 'claudeCode' : c.client]!;
      expect((parsed as Record<string, Record<string, unknown>>)[c.key]!.opentabs).toEqual(shown[c.key]!.opentabs);

      const again = await setup(h, args);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`${file} already has this ${c.key}.opentabs entry: nothing written.`);
      expect(readFileSync(file, 'utf8')).toBe(text);

      const removed = await setup(h, [...args, '--remove']);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain(`Removed ${c.key}.opentabs from ${file}`);
      expect(readFileSync(file, 'utf8')).toBe(original);
      const twice = await setup(h, [...args, '--remove']);
      expect(twice.stdout).toContain(`${file} has no ${c.key}.opentabs: nothing to remove.`);
    });
  }

  test('a file that does not parse is refused, named with the parser message, and left as it was', async () => {
    const { home: h } = home();
    const file = join(h, '.cursor', 'mcp.json');
    mkdirSync(join(h, '.cursor'));
    const broken = '{\n  "mcpServers": {\n    "a": { "url": "x" },\n  }\n}\n';
    writeFileSync(file, broken);
    chmodSync(file, 0o644);
    const r = await setup(h, ['cursor']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file} is not valid JSON: a comma before } at line 3, column 24. Left it unchanged`);
    expect(readFileSync(file, 'utf8')).toBe(broken);
    expect(mode(file)).toBe(0o644);
    // Gemini allows comments but not trailing commas; a top level that is not an object is refused too.
    const g = join(h, '.gemini', 'settings.json');
    mkdirSync(join(h, '.gemini'));
    writeFileSync(g, '[1, 2]\n');
    const rg = await setup(h, ['gemini']);
    expect(rg.code).toBe(1);
    expect(rg.stderr).toContain(`${g}: the top level is not an object; left it unchanged.`);
    // mcpServers that is not an object.
    writeFileSync(file, '{"mcpServers": []}');
    const ra = await setup(h, ['cursor']);
    expect(ra.stderr).toContain(`${file}: "mcpServers" is not an object; left it unchanged.`);
    expect(readFileSync(file, 'utf8')).toBe('{"mcpServers": []}');
  });

  test('a new file is created 0600 with its folders; --print shows the block and writes nothing', async () => {
    const { home: h } = home();
    const file = join(h, '.codeium', 'windsurf', 'mcp_config.json');
    const p = await setup(h, ['windsurf', '--print']);
    expect(p.code).toBe(0);
    expect(p.stdout).toContain(`Would add mcpServers.opentabs in ${file} (a new file, mode 0600):`);
    expect(JSON.parse(p.stdout.slice(p.stdout.indexOf('{')))).toEqual({ mcpServers: { opentabs: { serverUrl: url(), headers: headers() } } });
    expect(existsSync(join(h, '.codeium'))).toBe(false);
    const r = await setup(h, ['windsurf']);
    expect(r.code).toBe(0);
    expect(mode(file)).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ mcpServers: { opentabs: { serverUrl: url(), headers: headers() } } });
    // --gateway: the same entry at /mcp/gateway.
    const g = await setup(h, ['windsurf', '--gateway']);
    expect(g.stdout).toContain(`Updated mcpServers.opentabs in ${file}`);
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.opentabs.serverUrl).toBe(`${srv.url}/mcp/gateway`);
  });

  test('a file reached through a link: the link stays, the file it points to is written', async () => {
    const { home: h } = home();
    mkdirSync(join(h, 'dotfiles'));
    const real = join(h, 'dotfiles', 'cursor-mcp.json');
    writeFileSync(real, '{}\n');
    mkdirSync(join(h, '.cursor'));
    const link = join(h, '.cursor', 'mcp.json');
    symlinkSync(real, link);
    const r = await setup(h, ['cursor']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`(written to ${real}, where the link points)`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    expect(JSON.parse(readFileSync(real, 'utf8')).mcpServers.opentabs.url).toBe(url());
  });

  test('--project writes the project file; Windsurf has none and says so', async () => {
    const { home: h, proj } = home();
    for (const [client, rel, key] of [
      ['cursor', '.cursor/mcp.json', 'mcpServers'],
      ['claude-code', '.mcp.json', 'mcpServers'],
      ['gemini', '.gemini/settings.json', 'mcpServers'],
    ] as const) {
      const r = await setup(h, [client, '--project']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Added ${key}.opentabs in ${join(proj, rel)}`);
      expect(r.stderr).toContain(`note: ${join(proj, rel)} now holds your OpenTabs client token; keep it out of version control`);
      expect(JSON.parse(readFileSync(join(proj, rel), 'utf8'))[key].opentabs.headers).toEqual(headers());
    }
    const other = join(h, 'other');
    mkdirSync(other);
    expect((await setup(h, ['cursor', '--project', '--dir', other])).stdout).toContain(join(other, '.cursor', 'mcp.json'));
    const w = await setup(h, ['windsurf', '--project']);
    expect(w.code).toBe(2);
    expect(w.stderr).toContain('Windsurf has no project-level configuration file; leave out --project.');
    // The user-wide files were not touched.
    expect(existsSync(join(h, '.cursor'))).toBe(false);
    expect(existsSync(join(h, '.claude.json'))).toBe(false);
  });
});

describe('--project in a folder whose links lead out of it (a cloned repository)', () => {
  test('a linked .vscode/mcp.json or a linked .cursor folder is refused: the secret is not written where they lead', async () => {
    const { home: h, proj } = home();
    // The user's own VS Code file, and a folder outside the project.
    const userFile = join(h, '.config', 'Code', 'User', 'mcp.json');
    mkdirSync(join(userFile, '..'), { recursive: true });
    writeFileSync(userFile, '{"servers": {}}\n');
    mkdirSync(join(proj, '.vscode'));
    symlinkSync(userFile, join(proj, '.vscode', 'mcp.json'));
    const outside = join(h, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, join(proj, '.cursor'));
    const v = await setup(h, ['vscode', '--project']);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain(`${join(proj, '.vscode', 'mcp.json')} leads out of the project folder ${proj} (through a link, to ${userFile}); left it unchanged.`);
    expect(readFileSync(userFile, 'utf8')).toBe('{"servers": {}}\n');
    const c = await setup(h, ['cursor', '--project']);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain(`leads out of the project folder ${proj} (through a link, to ${join(outside, 'mcp.json')})`);
    expect(existsSync(join(outside, 'mcp.json'))).toBe(false);
    // OpenCode's project files too.
    symlinkSync(userFile, join(proj, 'opencode.json'));
    const o = await setup(h, ['opencode', '--dir', proj]);
    expect(o.code).toBe(1);
    expect(readFileSync(userFile, 'utf8')).toBe('{"servers": {}}\n');
    // A link that stays inside the project is fine.
    mkdirSync(join(proj, 'shared'));
    writeFileSync(join(proj, 'shared', 'gemini.json'), '{}');
    mkdirSync(join(proj, '.gemini'));
    symlinkSync(join(proj, 'shared', 'gemini.json'), join(proj, '.gemini', 'settings.json'));
    expect((await setup(h, ['gemini', '--project'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(proj, 'shared', 'gemini.json'), 'utf8')).mcpServers.opentabs.httpUrl).toBe(url());
  });
});

describe('VS Code: mcp.json with comments and trailing commas', () => {
  test('comments and trailing commas stay; the result parses as VS Code parses it', async () => {
    const { home: h, proj } = home();
    const file = join(proj, '.vscode', 'mcp.json');
    mkdirSync(join(proj, '.vscode'));
    const original = `{
  // Servers for this repo
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/", // remote
    },
  },
  "inputs": [],
}
`;
    writeFileSync(file, original);
    const r = await setup(h, ['vscode', '--project']);
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('// Servers for this repo');
    expect(text).toContain('"url": "https://api.githubcopilot.com/mcp/", // remote');
    expect(parseJsonc(text)).toEqual({
      servers: { github: { type: 'http', url: 'https://api.githubcopilot.com/mcp/' }, opentabs: { type: 'http', url: url(), headers: headers() } },
      inputs: [],
    });
    expect((await setup(h, ['vscode', '--project'])).stdout).toContain('nothing written');
    expect((await setup(h, ['vscode', '--project', '--remove'])).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  test('the user file is the profile mcp.json under XDG_CONFIG_HOME (~/.config) on Linux; --insiders has its own', async () => {
    const { home: h } = home();
    expect((await setup(h, ['vscode'])).stdout).toContain(`Added servers.opentabs in ${join(h, '.config', 'Code', 'User', 'mcp.json')}`);
    expect((await setup(h, ['vscode', '--insiders'])).stdout).toContain(join(h, '.config', 'Code - Insiders', 'User', 'mcp.json'));
    const xdg = join(h, 'xdg');
    expect((await setup(h, ['vscode'], { XDG_CONFIG_HOME: xdg })).stdout).toContain(join(xdg, 'Code', 'User', 'mcp.json'));
  });
});

describe('Codex CLI: config.toml', () => {
  test('the table goes in with the rest kept; a TOML parser reads it; again: nothing; --remove: the file as it was', async () => {
    const { home: h } = home();
    const codexHome = join(h, 'codex-home');
    mkdirSync(codexHome);
    const file = join(codexHome, 'config.toml');
    const original = `# my settings
model = "gpt-5-codex"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "gpt-5-mini"
`;
    writeFileSync(file, original);
    const r = await setup(h, ['codex'], { CODEX_HOME: codexHome });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Added mcp_servers.opentabs in ${file}`);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(original)).toBe(true);
    expect(text.endsWith(`\n${mcpConfigs(srv.url, srv.clientToken, srv.configDir).codexToml}\n`)).toBe(true);
    const parsed = JSON.parse(JSON.stringify(tomlParse.parse(text)));
    expect(parsed).toEqual({
      model: 'gpt-5-codex',
      mcp_servers: { docs: { command: 'npx', args: ['-y', 'docs-mcp'] }, opentabs: { url: url(), http_headers: headers() } },
      profiles: { fast: { model: 'gpt-5-mini' } },
    });
    expect(Bun.TOML.parse(text)).toEqual(parsed);
    expect((await setup(h, ['codex'], { CODEX_HOME: codexHome })).stdout).toContain('nothing written');
    // --gateway replaces the table where it stands.
    await setup(h, ['codex', '--gateway'], { CODEX_HOME: codexHome });
    expect((Bun.TOML.parse(readFileSync(file, 'utf8')) as { mcp_servers: { opentabs: { url: string } } }).mcp_servers.opentabs.url).toBe(`${srv.url}/mcp/gateway`);
    expect((await setup(h, ['codex', '--remove'], { CODEX_HOME: codexHome })).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  test('an old opentabs table and its sub-table are replaced in place; an inline form is refused; broken TOML is refused', async () => {
    const { home: h } = home();
    const file = join(h, '.codex', 'config.toml');
    mkdirSync(join(h, '.codex'));
    writeFileSync(file, `[mcp_servers.opentabs]\nurl = "http://127.0.0.1:1/mcp"\n[mcp_servers.opentabs.env]\nA = "1"\n\n# next one\n[mcp_servers.z]\ncommand = "z"\n`);
    const r = await setup(h, ['codex']);
    expect(r.stdout).toContain(`Updated mcp_servers.opentabs in ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(`${mcpConfigs(srv.url, srv.clientToken, srv.configDir).codexToml}\n\n# next one\n[mcp_servers.z]\ncommand = "z"\n`);
    const inline = '[mcp_servers]\nopentabs = { url = "http://127.0.0.1:1/mcp" }\n';
    writeFileSync(file, inline);
    const ri = await setup(h, ['codex']);
    expect(ri.code).toBe(1);
    expect(ri.stderr).toContain(`${file}: mcp_servers.opentabs is written in a form this command does not edit`);
    expect(readFileSync(file, 'utf8')).toBe(inline);
    writeFileSync(file, 'model = \n');
    const rb = await setup(h, ['codex']);
    expect(rb.code).toBe(1);
    expect(rb.stderr).toContain(`${file} is not valid TOML: `);
    expect(readFileSync(file, 'utf8')).toBe('model = \n');
  });
});

describe('Claude Desktop', () => {
  test('Linux has no official build: refused with the reason; --file writes the stdio bridge entry', async () => {
    const { home: h } = home();
    const r = await setup(h, ['claude-desktop']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Claude Desktop has no official Linux build');
    const file = join(h, 'claude_desktop_config.json');
    writeFileSync(file, JSON.stringify({ globalShortcut: 'Ctrl+Space', mcpServers: {} }, null, 2));
    const w = await setup(h, ['claude-desktop', '--file', file, '--gateway']);
    expect(w.code).toBe(0);
    const cfg = JSON.parse(readFileSync(file, 'utf8'));
    expect(cfg.globalShortcut).toBe('Ctrl+Space');
    const e = cfg.mcpServers.opentabs as { command: string; args: string[]; env?: Record<string, string> };
    expect(e.args.slice(-4)).toEqual(['mcp', '--gateway', '--port', String(srv.port)]);
    expect(e.env).toEqual({ OPENTABS_CONFIG_DIR: srv.configDir });
    // The entry runs: the bridge answers initialize over stdio.
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const proc = Bun.spawn([e.command, ...e.args, '--no-start'], { env: { ...process.env, ...e.env, HOME: h }, stdin: new Blob([`${init}\n`]), stdout: 'pipe', stderr: 'pipe' });
    const timer = setTimeout(() => proc.kill(), 60_000);
    const outText = await new Response(proc.stdout).text();
    clearTimeout(timer);
    expect(JSON.parse(outText.split('\n')[0]!).result.serverInfo).toBeDefined();
  });
});

describe('opentabs doctor knows every file setup writes', () => {
  test('clientConfigFiles lists each user and project file (doctor warns when others can read one)', async () => {
    const { home: h, proj } = home();
    const written: string[] = [];
    for (const args of [['cursor'], ['vscode'], ['vscode', '--insiders'], ['windsurf'], ['gemini'], ['codex'], ['claude-code', '--no-cli'], ['cursor', '--project'], ['vscode', '--project'], ['gemini', '--project'], ['codex', '--project'], ['claude-code', '--project'], ['opencode']]) {
      const r = await setup(h, args);
      expect(r.code).toBe(0);
      written.push(/^Added \S+ in (.+)$/m.exec(r.stdout)![1]!);
    }
    const known = clientConfigFiles(proj, h, {});
    for (const file of written) expect(known).toContain(file);
  });
});

describe('start --show-config leads with the setup command', () => {
  test('the printed command runs as printed (config dir included) and writes the client file', async () => {
    const { home: h } = home();
    const text = renderMcpConfig(srv.url, srv.clientToken, srv.configDir, true);
    const line = text.split('\n').find((l) => l.endsWith(' setup <client>'))!;
    expect(line).toContain(`OPENTABS_CONFIG_DIR=${srv.configDir} `);
    const env: Record<string, string> = { HOME: h, PATH: PATH_NO_CLIENTS, NO_COLOR: '1' };
    const proc = Bun.spawn(['/bin/bash', '-c', line.replace('<client>', 'cursor')], { env, cwd: h, stdout: 'pipe', stderr: 'pipe' });
    const timer = setTimeout(() => proc.kill(), 60_000);
    const [outText, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(outText).toContain(`Added mcpServers.opentabs in ${join(h, '.cursor', 'mcp.json')}`);
    expect(JSON.parse(readFileSync(join(h, '.cursor', 'mcp.json'), 'utf8')).mcpServers.opentabs.headers).toEqual(headers());
  });
});

describe('--help', () => {
  test('every client has its help, naming its file; setup --help lists them all', async () => {
    const { home: h } = home();
    const top = await runCli(['setup', '--help'], { configDir: srv.configDir, env: { HOME: h } });
    expect(top.code).toBe(0);
    for (const [client, file] of [
      ['claude-code', '.claude.json'], ['cursor', '.cursor/mcp.json'], ['vscode', 'Code/User/mcp.json'], ['windsurf', 'mcp_config.json'],
      ['gemini', '.gemini/settings.json'], ['codex', 'config.toml'], ['opencode', 'opencode.json'], ['claude-desktop', 'no official Linux build'],
    ]) {
      expect(top.stdout).toContain(`  ${client} `);
      const r = await runCli(['setup', client!, '--help'], { configDir: srv.configDir, env: { HOME: h } });
      expect({ client, code: r.code, stderr: r.stderr }).toEqual({ client, code: 0, stderr: '' });
      expect(r.stdout).toContain(`Usage: opentabs setup ${client}`);
      expect(r.stdout).toContain(file!);
    }
  });
});

describe('file-edit guards', () => {
  test('a file written by someone else between read and write is not overwritten', async () => {
    const { home: h } = home();
    const file = join(h, 'x.json');
    writeFileSync(file, '{"a": 1}');
    const plan = planEdit({ path: file, format: { kind: 'json', dialect: STRICT_JSON }, container: 'mcpServers', name: 'opentabs', entry: httpEntry('cursor', url(), srv.clientToken) });
    writeFileSync(file, '{"a": 2}');
    await expect(applyPlan(plan)).rejects.toThrow(`${file} changed while it was being edited`);
    expect(readFileSync(file, 'utf8')).toBe('{"a": 2}');
  });
});

const CLAUDE_BIN = '/tmp/e9clients/node_modules/.bin';
// Claude Code reads add-json's entry from stdin in some versions only (2.1 takes it as an argument,
// which would put the token on a command line): setup then edits the file itself.
const claudeStdin =
  existsSync(join(CLAUDE_BIN, 'claude')) && /stdin/i.test(Bun.spawnSync([join(CLAUDE_BIN, 'claude'), 'mcp', 'add-json', '--help'], { stdout: 'pipe', stderr: 'pipe' }).stdout.toString());
describe.skipIf(!existsSync(join(CLAUDE_BIN, 'claude')))('Claude Code with the real claude CLI', () => {
  test('setup claude-code runs `claude mcp add-json`; `claude mcp list` shows opentabs Connected; --remove takes it out', async () => {
    const { home: h } = home();
    const env = { PATH: `${CLAUDE_BIN}:${PATH_NO_CLIENTS}` };
    const r = await setup(h, ['claude-code'], env);
    expect(r.stderr).not.toContain('error');
    expect(r.code).toBe(0);
    const file = join(h, '.claude.json');
    expect(r.stdout).toContain(`Added mcpServers.opentabs in ${file}${claudeStdin ? ' (with `claude mcp add-json --scope user`)' : '\n'}`);
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.opentabs).toEqual({ type: 'http', url: url(), headers: headers() });
    expect(mode(file) & 0o077).toBe(0);
    const claude = (args: string[]) =>
      Bun.spawn([join(CLAUDE_BIN, 'claude'), ...args], { cwd: join(h, 'proj'), env: { ...process.env, HOME: h, PATH: env.PATH }, stdout: 'pipe', stderr: 'pipe' });
    const list = claude(['mcp', 'list']);
    const timer = setTimeout(() => list.kill(), 90_000);
    const listed = await new Response(list.stdout).text();
    clearTimeout(timer);
    expect(listed).toMatch(new RegExp(`opentabs: ${url().replace(/[.]/g, '\\.')} \\(HTTP\\) - [✓✔] Connected`));
    // Again: nothing to do, claude is not run.
    expect((await setup(h, ['claude-code'], env)).stdout).toContain('already has this mcpServers.opentabs entry: nothing written.');
    const removed = await setup(h, ['claude-code', '--remove'], env);
    expect(removed.stdout).toContain(`Removed mcpServers.opentabs from ${file}${claudeStdin ? ' (with `claude mcp remove --scope user`)' : '\n'}`);
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers?.opentabs).toBeUndefined();

    // --no-cli: the file edited directly, next to Claude Code's own state; claude reads it and connects.
    const keys = Object.keys(JSON.parse(readFileSync(file, 'utf8'))).filter((k) => k !== 'mcpServers');
    const direct = await setup(h, ['claude-code', '--no-cli', '--gateway'], env);
    expect(direct.stdout).toContain(`Added mcpServers.opentabs in ${file}`);
    const after = JSON.parse(readFileSync(file, 'utf8'));
    for (const k of keys) expect(Object.hasOwn(after, k)).toBe(true);
    const list2 = claude(['mcp', 'list']);
    const timer2 = setTimeout(() => list2.kill(), 90_000);
    const listed2 = await new Response(list2.stdout).text();
    clearTimeout(timer2);
    expect(listed2).toMatch(new RegExp(`opentabs: ${srv.url.replace(/[.]/g, '\\.')}/mcp/gateway \\(HTTP\\) - [✓✔] Connected`));

    // A local-scope entry for the folder hides the user one there: setup says so.
    const local = claude(['mcp', 'add', '--scope', 'local', '--transport', 'http', 'opentabs', 'http://127.0.0.1:1/mcp']);
    expect(await local.exited).toBe(0);
    const shadowed = await setup(h, ['claude-code'], env);
    expect(shadowed.stderr).toContain('also has an opentabs entry for this folder only (local scope)');
  });
});

describe.skipIf(!existsSync(join(CLAUDE_BIN, 'opencode')))('OpenCode --global with the real opencode CLI', () => {
  test('~/.config/opencode/opencode.json and plugin/: `opencode mcp list` in a folder without its own config connects', async () => {
    const { home: h, proj } = home();
    const r = await setup(h, ['opencode', '--global']);
    expect(r.code).toBe(0);
    const file = join(h, '.config', 'opencode', 'opencode.json');
    expect(r.stdout).toContain(`Added mcp.opentabs in ${file}`);
    expect(r.stdout).toContain(`Wrote OpenCode plugin ${join(h, '.config', 'opencode', 'plugin', 'opentabs.ts')}`);
    expect(r.stderr).not.toContain('version control');
    expect(existsSync(join(proj, 'opencode.json'))).toBe(false);
    const list = Bun.spawn([join(CLAUDE_BIN, 'opencode'), 'mcp', 'list'], {
      cwd: proj,
      env: { ...process.env, HOME: h, XDG_CONFIG_HOME: undefined, NO_COLOR: '1', PATH: `${CLAUDE_BIN}:${PATH_NO_CLIENTS}` },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const timer = setTimeout(() => list.kill(), 90_000);
    const listed = (await new Response(list.stdout).text()).replace(/\x1b\[[0-9;]*m/g, '');
    clearTimeout(timer);
    expect(listed).toMatch(/✓ opentabs\s+connected/);
    expect(listed).toContain(url());
    expect((await setup(h, ['opencode', '--global', '--dir', proj])).code).toBe(2);
    const removed = await setup(h, ['opencode', '--global', '--remove']);
    expect(removed.stdout).toContain(`Removed mcp.opentabs from ${file}`);
    expect(existsSync(join(h, '.config', 'opencode', 'plugin', 'opentabs.ts'))).toBe(false);
  });
});
