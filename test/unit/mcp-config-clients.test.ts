import { describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientTokenCommand, mcpConfigs, renderMcpConfig, secretCommand } from '../../cli/mcp-config.ts';

const base = 'http://127.0.0.1:9731';
const url = `${base}/mcp`;
const secret = 'ab'.repeat(32);
const headers = { Authorization: `Bearer ${secret}` };

/** Every block of `text` that starts with a line "{" and ends with a line "}", parsed. */
function jsonBlocks(text: string): unknown[] {
  return [...text.matchAll(/^\{\n[\s\S]*?\n\}$/gm)].map((m) => JSON.parse(m[0]));
}

describe('VS Code, Gemini CLI and Codex CLI blocks', () => {
  const m = mcpConfigs(base, secret, '/tmp/cfg');

  test('VS Code: mcp.json "servers" with a Streamable HTTP entry and the header', () => {
    expect(JSON.parse(JSON.stringify(m.vscode))).toEqual({ servers: { opentabs: { type: 'http', url, headers } } });
  });

  test('Gemini CLI: the mcp add command and settings.json with httpUrl and the header', () => {
    expect(m.geminiCommand).toBe(`gemini mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${secret}"`);
    expect(JSON.parse(JSON.stringify(m.gemini))).toEqual({ mcpServers: { opentabs: { httpUrl: url, headers } } });
  });

  test('Codex CLI: valid TOML, [mcp_servers.opentabs] with url and http_headers', () => {
    expect(Bun.TOML.parse(m.codexToml)).toEqual({ mcp_servers: { opentabs: { url, http_headers: headers } } });
  });

  test('Claude Code command: user scope (every folder, like the ~/.claude.json block), and how to replace it', () => {
    expect(m.claudeCodeCommand).toBe(`claude mcp add --scope user --transport http opentabs ${url} --header "Authorization: Bearer ${secret}"`);
    expect(renderMcpConfig(base, secret, '/tmp/cfg', false)).toContain('`claude mcp remove opentabs` first');
  });

  test('Codex CLI command: --bearer-token-env-var, and an export line that reads the client token with the CLI alone (no jq)', () => {
    expect(m.codexCommand).toBe(`codex mcp add opentabs --url ${url} --bearer-token-env-var OPENTABS_SECRET`);
    const dir = mkdtempSync(join(tmpdir(), "ot cfg '"));
    mkdirSync(join(dir, 'extension'));
    writeFileSync(join(dir, 'extension', 'auth.json'), JSON.stringify({ secret: 'cd'.repeat(32) }));
    writeFileSync(join(dir, 'client-token.json'), JSON.stringify({ clientToken: secret }));
    const line = mcpConfigs(base, secret, dir).codexExport;
    expect(line).not.toContain('jq');
    // A PATH with no jq (an empty folder) and no OPENTABS_CONFIG_DIR: the line carries what it needs.
    const env = { ...process.env, PATH: mkdtempSync(join(tmpdir(), 'no-jq-')) } as Record<string, string>;
    delete env.OPENTABS_CONFIG_DIR;
    const r = Bun.spawnSync(['/bin/bash', '-c', `${line}\nprintf %s "$OPENTABS_SECRET"`], { env });
    expect(r.stdout.toString()).toBe(secret);
    const text = renderMcpConfig(base, secret, dir, false);
    expect(text).not.toContain('jq');
    expect(text).toContain(`print it with \`${clientTokenCommand(dir)}\``);
    expect(text).toContain(`\`${secretCommand(dir)}\`: for you and the CLI, not for clients`);
  });

  test('--show-config prints all three; the first-run banner keeps the short forms and says where the rest is', () => {
    const full = renderMcpConfig(base, secret, '/tmp/cfg', true);
    const blocks = jsonBlocks(full);
    expect(blocks).toContainEqual(m.vscode);
    expect(blocks).toContainEqual(m.gemini);
    expect(full).toContain(`${m.geminiCommand}\n`);
    expect(full).toContain(`\n${m.codexToml}\n`);
    expect(full).toContain(`\n${m.codexExport}\n${m.codexCommand}\n`);

    const short = renderMcpConfig(base, secret, '/tmp/cfg', false);
    const shortBlocks = jsonBlocks(short);
    expect(shortBlocks).not.toContainEqual(m.vscode);
    expect(shortBlocks).not.toContainEqual(m.gemini);
    expect(short).toContain(`${m.geminiCommand}\n`);
    expect(short).toContain(`\n${m.codexToml}\n`);
    expect(short).toContain(`\n${m.codexExport}\n${m.codexCommand}\n`);
    expect(short).toContain('`opentabs start --show-config`');
    expect(short.split('\n').length).toBeLessThan(full.split('\n').length);
  });
});
