/**
 * The MCP clients `opentabs setup <client>` configures: where each keeps its servers, in which
 * format, and the documentation page that says so. The entries themselves come from
 * cli/mcp-config.ts (httpEntry, stdioConfig), which --show-config prints.
 *
 * Formats, as documented:
 *   Claude Code     ~/.claude.json "mcpServers" (user scope), .mcp.json (project scope); JSON.
 *                   https://code.claude.com/docs/en/mcp
 *   Cursor          ~/.cursor/mcp.json (global), .cursor/mcp.json (project); "mcpServers"; JSON.
 *                   https://cursor.com/docs/mcp
 *   VS Code         user-profile mcp.json, .vscode/mcp.json (workspace); "servers"; JSON with
 *                   comments and trailing commas (VS Code's settings dialect).
 *                   https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
 *   Windsurf        ~/.codeium/windsurf/mcp_config.json (user only); "mcpServers", `serverUrl`; JSON.
 *                   https://docs.windsurf.com/windsurf/cascade/mcp
 *   Gemini CLI      ~/.gemini/settings.json (user), .gemini/settings.json (project); "mcpServers",
 *                   `httpUrl`; Gemini CLI strips comments before parsing its settings.
 *                   https://geminicli.com/docs/tools/mcp-server/ and https://geminicli.com/docs/cli/configuration
 *   Codex CLI       ~/.codex/config.toml ($CODEX_HOME), .codex/config.toml (trusted project);
 *                   [mcp_servers.<name>] with `url` and `http_headers`; TOML.
 *                   https://developers.openai.com/codex/mcp
 *   OpenCode        opencode.json (project), ~/.config/opencode/opencode.json (global), "mcp"
 *                   with type remote; JSON. Plugins: .opencode/plugin/, ~/.config/opencode/plugin/.
 *                   https://opencode.ai/docs/mcp-servers/
 *   Claude Desktop  claude_desktop_config.json: ~/Library/Application Support/Claude (macOS),
 *                   %APPDATA%\Claude (Windows); no official Linux build; stdio servers only.
 *                   https://modelcontextprotocol.io/quickstart/user
 */
import { join } from 'node:path';
import { homeDir } from '../../server/protocol/local-files.ts';
import type { JsonDialect } from './jsonc.ts';
import { STRICT_JSON } from './jsonc.ts';
import type { FileFormat } from './file-edit.ts';
import type { HttpClient } from '../mcp-config.ts';
import { claudeCodeUserFile, claudeDesktopFile, codexUserFile, opencodeUserDir, vscodeUserFile } from './paths.ts';

export type ClientId = HttpClient | 'claude-desktop';

const JSONC: JsonDialect = { comments: true, trailingCommas: true };
const JSON_WITH_COMMENTS: JsonDialect = { comments: true, trailingCommas: false };
const json = (dialect: JsonDialect): FileFormat => ({ kind: 'json', dialect });

export interface ClientSpec {
  id: ClientId;
  /** The client's name as its users know it. */
  title: string;
  format: FileFormat;
  /** The user-scope file; null with a reason when there is none on this OS. */
  userFile(opts: { insiders?: boolean }): string | { none: string };
  /** The project-scope file in folder `dir`, when the client has one. */
  projectFile?: (dir: string) => string;
  /** What to tell the user after writing (how the client picks it up). */
  after: string;
}

export const CLIENTS: Record<ClientId, ClientSpec> = {
  'claude-code': {
    id: 'claude-code',
    title: 'Claude Code',
    format: json(STRICT_JSON),
    userFile: () => claudeCodeUserFile(),
    projectFile: (dir) => join(dir, '.mcp.json'),
    after: 'Claude Code reads it when a session starts: `claude mcp list` shows opentabs and whether it connects (a server in a project\'s .mcp.json waits until you approve it in `claude`).',
  },
  cursor: {
    id: 'cursor',
    title: 'Cursor',
    format: json(STRICT_JSON),
    userFile: () => join(homeDir(), '.cursor', 'mcp.json'),
    projectFile: (dir) => join(dir, '.cursor', 'mcp.json'),
    after: 'Cursor picks it up in Settings → MCP (turn opentabs on there if it is off).',
  },
  vscode: {
    id: 'vscode',
    title: 'VS Code (GitHub Copilot agent mode)',
    format: json(JSONC),
    userFile: ({ insiders }) => vscodeUserFile(insiders),
    projectFile: (dir) => join(dir, '.vscode', 'mcp.json'),
    after: 'VS Code starts the server from the Chat view or the command MCP: List Servers; it asks once whether you trust it.',
  },
  windsurf: {
    id: 'windsurf',
    title: 'Windsurf',
    format: json(STRICT_JSON),
    userFile: () => join(homeDir(), '.codeium', 'windsurf', 'mcp_config.json'),
    after: 'Refresh the MCP servers in Windsurf (Cascade → MCPs) to load it.',
  },
  gemini: {
    id: 'gemini',
    title: 'Gemini CLI',
    format: json(JSON_WITH_COMMENTS),
    userFile: () => join(homeDir(), '.gemini', 'settings.json'),
    projectFile: (dir) => join(dir, '.gemini', 'settings.json'),
    after: 'Gemini CLI reads it when it starts: `gemini mcp list` or /mcp shows opentabs (in a folder you have not trusted, Gemini leaves MCP servers disabled).',
  },
  codex: {
    id: 'codex',
    title: 'Codex CLI',
    format: { kind: 'toml' },
    userFile: () => codexUserFile(),
    projectFile: (dir) => join(dir, '.codex', 'config.toml'),
    after: 'Codex reads it when a session starts: `codex mcp list` shows opentabs (a project file counts only in a project Codex trusts).',
  },
  opencode: {
    id: 'opencode',
    title: 'OpenCode',
    format: json(STRICT_JSON),
    userFile: () => join(opencodeUserDir(), 'opencode.json'),
    projectFile: (dir) => join(dir, 'opencode.json'),
    after: 'OpenCode reads it when it starts.',
  },
  'claude-desktop': {
    id: 'claude-desktop',
    title: 'Claude Desktop',
    format: json(STRICT_JSON),
    userFile: () =>
      claudeDesktopFile() ??
      // Unofficial Linux builds exist; where they keep the file is theirs to say.
      {
        none: 'Claude Desktop has no official Linux build, so there is no documented place for its configuration here. With an unofficial build, give its claude_desktop_config.json with --file.',
      },
    after: 'Quit Claude Desktop completely and open it again: it reads the file when it starts.',
  },
};
