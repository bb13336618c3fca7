/**
 * Add, replace or remove the `opentabs` entry of one client config file, safely:
 *   - the file is parsed in the client's own dialect (JSON, JSON with comments, TOML); one that does
 *     not parse is refused with the parser's message and left as it is;
 *   - only our entry's text changes (cli/setup/jsonc.ts, cli/setup/toml.ts);
 *   - the new text replaces the file atomically (temp file + rename), after checking that nobody
 *     wrote the file since it was read; a file reached through a symbolic link is written where
 *     the link points, so the link stays;
 *   - a new file is created with mode 0600 (it holds the secret); an existing one keeps its
 *     owner's bits and loses group and other access when the secret goes into it;
 *   - nothing is written when the entry is already what it should be.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, statSync, chmodSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import { writeFileAtomic } from '../../server/state/atomic.ts';
import { CliError } from '../output.ts';
import { editJsonMember, JsonEditRefused, JsonSyntaxError, type JsonDialect } from './jsonc.ts';
import { editTomlTable, TomlEditRefused, type TomlValue } from './toml.ts';

export type FileFormat = { kind: 'json'; dialect: JsonDialect } | { kind: 'toml' };

export interface EntryEdit {
  /** The path as the user knows it (a link is followed when written). */
  path: string;
  format: FileFormat;
  /** Key of the object that holds the servers ("mcpServers", "servers", "mcp", "mcp_servers"). */
  container: string;
  name: string;
  /** The entry to write; undefined removes it. */
  entry: Record<string, unknown> | undefined;
  /**
   * A project folder the file must stay in: a link at the file or at a folder on the way that
   * leads out of it is refused (a cloned repository's `.vscode` linked to the user's own files
   * would otherwise have the secret written there).
   */
  within?: string;
}

export interface Plan {
  edit: EntryEdit;
  /** Where the bytes go: `path`, or the file a link at `path` points to. */
  target: string;
  exists: boolean;
  original: string;
  text: string;
  before: unknown;
  changed: boolean;
  oldMode: number | null;
  newMode: number;
}

function formatName(f: FileFormat): string {
  if (f.kind === 'toml') return 'TOML';
  return f.dialect.comments ? 'JSON (comments allowed)' : 'JSON';
}

/** Read, parse and compute the new text; writes nothing. Throws CliError naming the file. */
export function planEdit(edit: EntryEdit): Plan {
  const { path } = edit;
  let target = path;
  let exists = false;
  let original = '';
  let oldMode: number | null = null;
  let lst;
  try {
    lst = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`Cannot read ${path}: ${(e as Error).message}`);
  }
  if (lst) {
    if (lst.isSymbolicLink()) {
      try {
        target = realpathSync(path);
      } catch {
        throw new CliError(`${path} is a link to a file that does not exist; left it unchanged. Create the file it points to, or remove the link, and retry.`);
      }
    }
    const st = statSync(target);
    if (!st.isFile()) throw new CliError(`${path} is not a regular file; left it unchanged.`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new CliError(`${path} belongs to another user (uid ${st.uid}); left it unchanged. Run this as that user.`);
    }
    exists = true;
    oldMode = st.mode & 0o777;
    try {
      original = readFileSync(target, 'utf8');
    } catch (e) {
      throw new CliError(`Cannot read ${path}: ${(e as Error).message}`);
    }
  }
  if (edit.within !== undefined) insideProject(path, edit.within);
  let result: { text: string; before: unknown; changed: boolean };
  try {
    result =
      edit.format.kind === 'toml'
        ? editTomlTable(original, edit.container, edit.name, edit.entry as Record<string, TomlValue> | undefined)
        : editJsonMember(original, edit.format.dialect, { container: [edit.container], name: edit.name, value: edit.entry });
  } catch (e) {
    if (e instanceof JsonEditRefused || e instanceof TomlEditRefused) throw new CliError(`${path}: ${e.message}; left it unchanged.`);
    if (e instanceof JsonSyntaxError || edit.format.kind === 'toml') {
      throw new CliError(`${path} is not valid ${formatName(edit.format)}: ${(e as Error).message}. Left it unchanged: fix it and retry.`);
    }
    throw e;
  }
  // The secret goes in: only the owner may read the file. A removal keeps the mode.
  const newMode = oldMode === null ? 0o600 : edit.entry === undefined ? oldMode : oldMode & 0o700;
  return { edit, target, exists, original, ...result, oldMode, newMode };
}

/** Throws unless `path` — after every link on the way, or where it would be created — is inside `folder`. */
export function insideProject(path: string, folder: string): void {
  const base = realpathSync(folder);
  // The path itself when it exists (a link: where it leads), else the nearest folder above it that does.
  let probe = path;
  for (let i = 0; i < 64; i++) {
    try {
      lstatSync(probe);
      break;
    } catch {
      probe = dirname(probe);
    }
  }
  let real: string;
  try {
    real = realpathSync(probe);
  } catch {
    throw new CliError(`${path} leads through a link to something that does not exist; left it unchanged.`);
  }
  const rest = probe === path ? '' : path.slice(probe.length);
  const full = real + rest;
  if (full !== base && !full.startsWith(base.endsWith(sep) ? base : base + sep)) {
    throw new CliError(`${path} leads out of the project folder ${folder} (through a link, to ${full}); left it unchanged. With --project only files inside the folder are written.`);
  }
}

/** Write the plan's text (when it changed) and settle the mode. Throws CliError naming the file. */
export async function applyPlan(plan: Plan): Promise<void> {
  const { path } = plan.edit;
  if (!plan.changed) {
    if (plan.exists && plan.oldMode !== plan.newMode) chmodSync(plan.target, plan.newMode);
    return;
  }
  // Someone (the client itself) may have written the file since it was read: never overwrite that.
  const now = existsSync(plan.target) ? readFileSync(plan.target, 'utf8') : null;
  if ((now ?? '') !== plan.original || (now === null) === plan.exists) {
    throw new CliError(`${path} changed while it was being edited (another program wrote it); left it as that program wrote it. Run the command again.`);
  }
  mkdirSync(dirname(plan.target), { recursive: true });
  try {
    await writeFileAtomic(plan.target, plan.text, plan.newMode);
  } catch (e) {
    throw new CliError(`Could not write ${path}: ${(e as Error).message}`);
  }
}

export function modeText(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}
