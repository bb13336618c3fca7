/**
 * Where each MCP client keeps its configuration, per OS, as its documentation gives it (the pages
 * are named in cli/setup/clients.ts). Absolute paths; the environment variables the clients
 * themselves honour (CLAUDE_CONFIG_DIR, CODEX_HOME, APPDATA, XDG_CONFIG_HOME) are honoured here.
 */
import { join } from 'node:path';
import { homeDir } from '../../server/protocol/local-files.ts';

type Env = Record<string, string | undefined>;

/** Claude Code's user file: ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json. */
export function claudeCodeUserFile(env: Env = process.env, home = homeDir()): string {
  const dir = env.CLAUDE_CONFIG_DIR?.trim();
  return join(dir ? dir : home, '.claude.json');
}

/** Codex CLI's config.toml: $CODEX_HOME/config.toml, else ~/.codex/config.toml. */
export function codexUserFile(env: Env = process.env, home = homeDir()): string {
  const dir = env.CODEX_HOME?.trim();
  return join(dir ? dir : join(home, '.codex'), 'config.toml');
}

/** OpenCode's global config folder: $XDG_CONFIG_HOME/opencode, else ~/.config/opencode (all OSes). */
export function opencodeUserDir(env: Env = process.env, home = homeDir()): string {
  return join(env.XDG_CONFIG_HOME?.trim() || join(home, '.config'), 'opencode');
}

/** %APPDATA% on Windows (Roaming), the folder desktop apps keep their settings in. */
function appData(env: Env, home: string): string {
  return env.APPDATA?.trim() || join(home, 'AppData', 'Roaming');
}

/**
 * VS Code's user-profile mcp.json (the default profile; `MCP: Open User Configuration` opens the
 * active profile's). Insiders keeps its own folder.
 */
export function vscodeUserFile(insiders = false, env: Env = process.env, home = homeDir(), platform = process.platform): string {
  const app = insiders ? 'Code - Insiders' : 'Code';
  const base =
    platform === 'darwin'
      ? join(home, 'Library', 'Application Support')
      : platform === 'win32'
        ? appData(env, home)
        : env.XDG_CONFIG_HOME?.trim() || join(home, '.config');
  return join(base, app, 'User', 'mcp.json');
}

/** Claude Desktop's claude_desktop_config.json: macOS and Windows only (there is no official Linux build). */
export function claudeDesktopFile(env: Env = process.env, home = homeDir(), platform = process.platform): string | null {
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json');
  if (platform === 'win32') return join(appData(env, home), 'Claude', 'claude_desktop_config.json');
  return null;
}
