/**
 * Which pages the built-in tools may open, read or drive. One module, used by the dispatch path in
 * background/main.ts for every built-in call (the tab's current URL and the `url` argument), by
 * debugger.ts (attach) and by the script helpers (pinned to the checked document), so a new tool
 * cannot forget it.
 *
 * Allowed: http(s), about:blank, and file:// only when the user turned it on (config.json
 * `allowFileUrls`, changed by the side panel or `opentabs config set allowFileUrls true`; the
 * server sends it with sync.full). Refused: every other scheme — extension pages (ours run with
 * the extension's privileges and hold the panel and auth.json), browser pages (chrome://,
 * chrome-untrusted://, devtools://, edge://, view-source: …), data:/blob:/filesystem: documents
 * (content the agent chose, in an origin no site owns), the Chrome Web Store (installs
 * extensions), and, even with file:// on, the OpenTabs config folder (auth.json, config.json),
 * /proc and /dev, whose paths lead to any file, and hidden files and folders (a path segment
 * starting with '.'), where configuration and credentials live: MCP client configs holding the
 * OpenTabs secret (~/.claude.json, ~/.config/opencode/, .cursor/mcp.json), ~/.ssh, ~/.aws; and MCP
 * client configs by name where they are not hidden (a project's opencode.json). A file:// path is
 * judged by where it leads too, symbolic links followed (realPaths, resolved by the server), and a
 * file with more than one name (a hard link) is refused: its other names may be any of those.
 */
import { TAB_URL_WAIT_MS } from '../../server/protocol/limits.ts';
import { EXTENSION_HINT_COMMANDS } from '../../server/protocol/errors.ts';
import { ToolError } from '../shared/tool-error.ts';
import { getTab } from './tab-lookup.ts';

interface PolicyState {
  allowFileUrls: boolean;
  /** Folders file:// may never reach (lower-case, '/'-separated, no trailing slash). */
  protectedPaths: string[];
}

const state: PolicyState = { allowFileUrls: false, protectedPaths: [] };

/** From sync.full: the user's file:// setting and the folders that stay refused. */
export function setUrlPolicy(p: { allowFileUrls?: boolean; protectedPaths?: string[] }): void {
  state.allowFileUrls = p.allowFileUrls === true;
  state.protectedPaths = (p.protectedPaths ?? []).map(normalizePath).filter((x) => x !== '');
}

export function urlPolicy(): Readonly<PolicyState> {
  return state;
}

/** Extension galleries: pages there install software into the browser. */
const STORE_PAGES: { host: string; path: string }[] = [
  { host: 'chromewebstore.google.com', path: '/' },
  { host: 'chrome.google.com', path: '/webstore' },
  { host: 'microsoftedge.microsoft.com', path: '/addons' },
];

/** '/'-separated, '.' and '..' resolved, case kept, no trailing '/' (C:/… for a drive). */
function lexicalPath(p: string): string {
  let s = p.replace(/\\/g, '/');
  if (/^\/[a-zA-Z]:/.test(s)) s = s.slice(1); // file:///C:/… → C:/…
  const out: string[] = [];
  for (const seg of s.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  const joined = out.join('/');
  return /^[a-zA-Z]:/.test(joined) ? joined : `/${joined}`;
}

/**
 * '/'-separated, '.' and '..' resolved, lower-case (case-insensitive file systems), no trailing '/',
 * and, on a drive path (C:/…), each name without trailing dots and spaces or an NTFS stream
 * (':…'): Windows drops them when it opens a path, so file:///C:/…/claude_desktop_config.json. and
 * …/claude_desktop_config.json::$DATA open claude_desktop_config.json.
 */
function normalizePath(p: string): string {
  const lower = lexicalPath(p).toLowerCase();
  if (!/^[a-z]:/.test(lower)) return lower;
  // After the drive, a ':' starts an NTFS stream name (auth.json::$DATA is auth.json's content).
  return lower
    .split('/')
    .map((seg, i) => (i === 0 ? seg : seg.split(':')[0]!.replace(/[. ]+$/, '') || seg))
    .join('/');
}

/**
 * Windows short (8.3) names: NAME~N with up to 6 characters before the '~' and an extension of up
 * to 3 (OPENTA~1 for .opentabs, CLAUDE~1.JSO for .claude.json). Windows opens a path by them, and
 * neither the path's own names nor where its links lead say which long name they stand for.
 */
function hasShortName(path: string): boolean {
  return /^[a-z]:/.test(path) && path.split('/').some((seg) => /^[^.~/]{1,6}~\d{1,6}(\.[^.]{0,3})?$/.test(seg));
}

/**
 * Linux's /proc shows every file again under other names (/proc/self/root/<path>,
 * /proc/<pid>/cwd/…, /proc/<pid>/fd/<n>), and /dev/fd and /dev/stdin lead into it: a check by path
 * cannot follow those names to the file they open (file:///proc/self/root/<config dir>/… is
 * auth.json), so both trees are refused like the config folder. No page lives there.
 */
const FILE_ALIAS_ROOTS = ['/proc', '/dev'];

/** A normalized file path that may name any file, the config folder's included. */
function isAliasPath(path: string): boolean {
  return FILE_ALIAS_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
}

/**
 * A normalized path with a hidden file or folder in it (a segment starting with '.'; '.' and '..'
 * are resolved before): where tools and apps keep configuration and credentials.
 */
function isHiddenPath(path: string): boolean {
  return path.split('/').some((seg) => seg.startsWith('.'));
}

/**
 * MCP clients' configuration files, which hold the OpenTabs secret in the Authorization header of
 * a remote server entry, under names that are not hidden: a project's opencode.json (what
 * `opentabs setup opencode` writes), VS Code's and Cursor's mcp.json, Windsurf's mcp_config.json,
 * Claude Desktop's claude_desktop_config.json (~/Library/Application Support on macOS, %APPDATA%
 * on Windows). Compared lower-case.
 */
const MCP_CONFIG_FILES: ReadonlySet<string> = new Set(['opencode.json', 'opencode.jsonc', 'mcp.json', 'mcp_config.json', 'claude_desktop_config.json']);

function isMcpConfigFile(path: string): boolean {
  return MCP_CONFIG_FILES.has(path.slice(path.lastIndexOf('/') + 1));
}

const HIDDEN_REFUSAL =
  'it is a hidden file or inside a hidden folder (a path segment starting with "."), where configuration and credentials live: MCP client configs holding the OpenTabs secret, ~/.ssh, ~/.aws';

/** The file:// URL's path, decoded and normalized; null when it cannot be decoded. */
function filePath(u: URL): string | null {
  try {
    return normalizePath(decodeURIComponent(u.pathname));
  } catch {
    return null;
  }
}

/**
 * Where file:// paths really lead. Chrome follows symbolic links when it opens a file:// URL, so a
 * visible path (file:///home/u/notes/key.txt) can show a hidden file (a link to ~/.ssh/id_rsa, as a
 * cloned repository or an unpacked archive may hold) or the config folder: only the server, on the
 * computer whose Chrome opens the file, can follow the link (file.realPaths). Filled before every
 * built-in call for the URLs it may meet (resolveFileUrls, from run.ts) and as file:// documents
 * commit; a file:// URL whose real path is not known yet is refused (it may lead anywhere).
 * Keyed by the lexical path as written, case kept; the value is normalized (normalizePath).
 */
const realPaths = new Map<string, string>();
/**
 * Keys of realPaths whose file has more than one name (a hard link, as the server saw it). Chrome
 * opens such a file by any of its names, and a hard link to ~/.ssh/id_rsa or auth.json at a visible
 * path is the same file: no path shows where its other names are, so such files are refused.
 */
const linkedPaths = new Set<string>();
/**
 * Keys of realPaths whose file the browser downloaded (chrome.downloads holds a record of it) and
 * whose type Chrome may run as a page. Any web page can make the browser download a file (an
 * `<a download>` needs no approval), and an HTML file opened from disk runs its scripts as a
 * file:// page, which may load other local files as scripts or style sheets (a hidden `.env`'s
 * `KEY="value"` lines become its globals) and send them to any site without another tool call.
 * Downloaded files of the types in INERT_DOWNLOAD_TYPES stay allowed (a PDF, a picture, text).
 */
const downloadedPaths = new Set<string>();
/** File name endings Chrome shows as a document that runs no script (a viewer or plain text). */
const INERT_DOWNLOAD_TYPES = new Set(['pdf', 'txt', 'text', 'log', 'csv', 'tsv', 'json', 'md', 'png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico', 'mp3', 'm4a', 'wav', 'flac', 'ogg', 'oga', 'mp4', 'm4v', 'webm', 'ogv']);
/** Entries kept; the oldest go first past it. */
const REAL_PATHS_MAX = 4096;
/** Paths asked of the server in one request (the method's own limit). */
const REAL_PATHS_PER_REQUEST = 256;
/** What the server says of file paths (file.realPaths): where each leads, and whether it has other names (hard links). */
type Resolved = { real: string[]; linked?: boolean[] };
let fileResolver: ((paths: string[]) => Promise<Resolved>) | null = null;
/** chrome.storage.session key: what was learned outlives a worker restart (the side panel's card of an asked call reads a tab's URL before any call resolves it). */
const REAL_PATHS_KEY = 'realPaths';
if (typeof chrome !== 'undefined' && chrome.storage?.session) {
  void chrome.storage.session.get(REAL_PATHS_KEY).then((saved) => {
    const list = (saved as { realPaths?: [string, string, boolean?, boolean?][] }).realPaths;
    if (!Array.isArray(list)) return;
    for (const [key, real, linked, downloaded] of list) {
      if (realPaths.has(key) || typeof key !== 'string' || typeof real !== 'string') continue;
      realPaths.set(key, real);
      if (linked === true) linkedPaths.add(key);
      if (downloaded === true) downloadedPaths.add(key);
    }
  }, () => {});
}

/** The lexical path of a file:// URL (the key of realPaths); null when it cannot be decoded. */
function fileKey(u: URL): string | null {
  try {
    return lexicalPath(decodeURIComponent(u.pathname));
  } catch {
    return null;
  }
}

/** Whether an absolute normalized path may not be shown: alias trees, the config folder, hidden, an MCP client config. */
function pathRefusal(path: string): string | null {
  if (isAliasPath(path)) return 'files under /proc and /dev are other names for any file, the OpenTabs config folder included';
  if (hasShortName(path)) return 'it holds a Windows short (8.3) name such as OPENTA~1, which may stand for a hidden folder or the OpenTabs config folder';
  if (inProtectedFolder(path)) return 'it is inside the OpenTabs config folder (holds the secret)';
  if (isHiddenPath(path)) return HIDDEN_REFUSAL;
  if (isMcpConfigFile(path)) return 'it is an MCP client configuration file, which holds the OpenTabs secret';
  return null;
}

/** How the server is asked where paths lead (set by run.ts with the connection); also resolves file:// documents as they commit. */
export function setFileResolver(fn: (paths: string[]) => Promise<Resolved>): void {
  const first = fileResolver === null;
  fileResolver = fn;
  if (first && typeof chrome !== 'undefined' && chrome.webNavigation) {
    chrome.webNavigation.onCommitted.addListener((d) => {
      if (state.allowFileUrls && d.url.startsWith('file:')) void resolveFileUrls([d.url]).catch(() => {});
    });
  }
}

/** Ask the server where the file:// URLs among `urls` lead (only while file:// pages are allowed); failures leave them unknown, i.e. refused. */
export async function resolveFileUrls(urls: Iterable<string | undefined>): Promise<void> {
  if (!state.allowFileUrls || !fileResolver) return;
  const keys = new Set<string>();
  for (const raw of urls) {
    if (!raw || !/^file:/i.test(raw)) continue;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    const key = u.protocol === 'file:' ? fileKey(u) : null;
    if (key !== null) keys.add(key);
  }
  const all = [...keys];
  for (let i = 0; i < all.length; i += REAL_PATHS_PER_REQUEST) {
    const chunk = all.slice(i, i + REAL_PATHS_PER_REQUEST);
    const { real, linked } = await fileResolver(chunk);
    await Promise.all(chunk.map(async (key, j) => {
      const r = real[j];
      if (typeof r !== 'string') return;
      // Asked before the answer is stored, so no check sees the path known and the record not yet asked.
      const downloaded = await browserDownloaded(key, r);
      realPaths.delete(key);
      realPaths.set(key, normalizePath(r));
      // A server that does not say counts as saying no other names.
      if (linked?.[j] === true) linkedPaths.add(key);
      else linkedPaths.delete(key);
      if (downloaded) downloadedPaths.add(key);
      else downloadedPaths.delete(key);
    }));
  }
  while (realPaths.size > REAL_PATHS_MAX) {
    const oldest = realPaths.keys().next().value!;
    realPaths.delete(oldest);
    linkedPaths.delete(oldest);
    downloadedPaths.delete(oldest);
  }
  const saved = [...realPaths].map(([key, real]) => [key, real, linkedPaths.has(key), downloadedPaths.has(key)]);
  if (all.length && typeof chrome !== 'undefined' && chrome.storage?.session) void chrome.storage.session.set({ [REAL_PATHS_KEY]: saved }).catch(() => {});
}

/** Download records of a file's name whose paths are followed to compare with it; more count as downloaded. */
const SAME_NAME_RECORDS_MAX = 64;

/**
 * Whether the browser downloaded the file at `lexical` (as written) or `real` (links followed) and
 * it is not of an inert type. Chrome's download records hold the path it wrote, which may be either,
 * or neither: it writes through the download folder as set, and when that folder is a symbolic
 * link (~/Downloads leading to another disk) the file's real path is in no record. So the records
 * of a file of the same name are followed too (the server says where their paths lead). A lookup
 * that fails counts as downloaded: the page is refused, not shown unchecked.
 */
async function browserDownloaded(lexical: string, real: string): Promise<boolean> {
  const name = real.slice(Math.max(real.lastIndexOf('/'), real.lastIndexOf('\\')) + 1);
  const dot = name.lastIndexOf('.');
  if (dot > 0 && INERT_DOWNLOAD_TYPES.has(name.slice(dot + 1).toLowerCase())) return false;
  if (typeof chrome === 'undefined' || !chrome.downloads) return false;
  try {
    for (const filename of new Set([lexical, real])) {
      if ((await chrome.downloads.search({ filename, limit: 1 })).length > 0) return true;
    }
    // RE2, case-insensitive (a case-insensitive disk opens the file by either case).
    const filenameRegex = `(?i)[/\\\\]${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
    const same = (await chrome.downloads.search({ filenameRegex, limit: SAME_NAME_RECORDS_MAX + 1 })).map((d) => d.filename).filter((f) => f !== '');
    if (same.length === 0) return false;
    if (same.length > SAME_NAME_RECORDS_MAX || !fileResolver) return true;
    const led = (await fileResolver(same)).real;
    const target = normalizePath(real);
    return same.some((f, i) => normalizePath(f) === target || (typeof led[i] === 'string' && normalizePath(led[i]!) === target));
  } catch {
    return true;
  }
}

const DOWNLOADED_REFUSAL = 'it is a file the browser downloaded from the web, and opened from disk its scripts could read other local files (the user can open it themselves if they trust it)';

const LINKED_REFUSAL = 'it is a file with more than one name (a hard link), and its other names, which no path shows, may be a hidden file\'s or the OpenTabs config folder\'s';

/** Whether the server said the file of a file:// URL has more than one name (a hard link). */
function hasOtherNames(u: URL): boolean {
  const key = fileKey(u);
  return key !== null && linkedPaths.has(key);
}

/** Where a file:// URL's path leads (normalized): undefined when not known yet. */
function realPathOf(u: URL): string | undefined {
  const key = fileKey(u);
  return key === null ? undefined : realPaths.get(key);
}

/** Why the URL is refused, or null when tools may use it. */
export function refusalReason(raw: string): string | null {
  if (raw === '') return 'the tab has no URL yet (still opening)';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'it is not an absolute URL';
  }
  const scheme = u.protocol;
  if (scheme === 'http:' || scheme === 'https:') {
    // A fully qualified name's trailing dot (chromewebstore.google.com.) names the same host to Chrome.
    const host = u.hostname.toLowerCase().replace(/\.+$/, '');
    if (STORE_PAGES.some((s) => host === s.host && (u.pathname === s.path || u.pathname.startsWith(s.path.endsWith('/') ? s.path : `${s.path}/`)))) return 'it is an extension store page';
    return null;
  }
  if (scheme === 'about:') return u.pathname === 'blank' ? null : `about:${u.pathname} is a browser page`;
  if (scheme === 'file:') {
    if (!state.allowFileUrls) return `file:// pages are off (the user can allow them in the side panel or with \`${EXTENSION_HINT_COMMANDS.allowFileUrls}\`)`;
    if (u.hostname !== '' && u.hostname !== 'localhost') return 'file:// URLs with a host (network shares) are not allowed';
    const path = filePath(u);
    if (path === null) return 'it is inside the OpenTabs config folder (holds the secret)';
    const written = pathRefusal(path);
    if (written) return written;
    // Chrome opens the file the path leads to, links followed: that file must be allowed too.
    const real = realPathOf(u);
    if (real === undefined) return 'where its path leads (symbolic links followed) is not checked yet; try again';
    const led = real === path ? null : pathRefusal(real);
    if (led) return `it leads through a symbolic link to a file the tools may not open (${led})`;
    if (hasOtherNames(u)) return LINKED_REFUSAL;
    const key = fileKey(u);
    if (key !== null && downloadedPaths.has(key)) return DOWNLOADED_REFUSAL;
    return null;
  }
  if (scheme === 'chrome-extension:' || scheme === 'moz-extension:' || scheme === 'extension:') return 'it is an extension page';
  if (scheme === 'data:' || scheme === 'blob:' || scheme === 'filesystem:') return `${scheme} documents are not allowed`;
  if (scheme === 'javascript:') return 'javascript: URLs are not allowed';
  return `${scheme} pages are browser pages`;
}

/** The decoded path of a file:// URL (null when it cannot be decoded); undefined for any other URL. */
function filePathOfUrl(raw: string): string | null | undefined {
  try {
    const u = new URL(raw);
    return u.protocol === 'file:' ? filePath(u) : undefined;
  } catch {
    return undefined;
  }
}

/** A file path inside the OpenTabs config folder, under /proc or /dev, or one that cannot be decoded (null). */
function inProtectedFolder(path: string | null): boolean {
  // A Windows short name may be the config folder's.
  if (path === null || isAliasPath(path) || hasShortName(path)) return true;
  return state.protectedPaths.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * For plugin injection (background/plugins.ts) and uploads: a file:// URL inside the OpenTabs
 * config folder, which no adapter may run in whatever its match patterns say (auth.json holds the
 * secret), or under /proc or /dev, where the config folder's files have other names.
 */
export function insideProtectedFolder(raw: string): boolean {
  const path = filePathOfUrl(raw);
  return path !== undefined && (inProtectedFolder(path) || inProtectedFolder(realPathOfUrl(raw) ?? path));
}

/** Whether the server said the file of a file:// URL has more than one name. */
function linkedUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'file:' && hasOtherNames(u);
  } catch {
    return false;
  }
}

/** The real path of a file:// URL where the server told it (realPaths), else undefined. */
function realPathOfUrl(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    return u.protocol === 'file:' ? realPathOf(u) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * For plugin adapters (background/plugin-tabs.ts): a file:// page that holds or may hold the
 * secret whatever a plugin's patterns say — inside the config folder, under /proc or /dev, a hidden
 * file or folder (~/.claude.json, ~/.config/opencode/), or an MCP client config by name
 * (opencode.json, claude_desktop_config.json …), or a file with more than one name (a hard link).
 * Built-in tools refuse the same pages.
 */
export function fileMayHoldSecret(raw: string): boolean {
  const path = filePathOfUrl(raw);
  if (path === undefined) return false;
  if (path === null) return true;
  const real = realPathOfUrl(raw);
  if (linkedUrl(raw)) return true;
  return [path, ...(real !== undefined && real !== path ? [real] : [])].some((p) => inProtectedFolder(p) || isHiddenPath(p) || isMcpConfigFile(p));
}

/** Scheme + host only: what list tools show of a refused tab's URL. */
export function redactedUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return `${u.origin}/`;
    return u.host ? `${u.protocol}//${u.host}/` : u.protocol;
  } catch {
    return '';
  }
}

/** A URL as an error message or a text passed on may name it: a page the tools refuse by scheme + host only. */
export function shownUrl(url: string): string {
  return refusalReason(url) === null ? url : redactedUrl(url) || 'a page';
}

/** URLs in a text: anything with a scheme and "//", and the schemes that take none. */
const URL_IN_TEXT = /\b(?:[a-z][a-z0-9+.-]*:\/\/|(?:about|blob|data|filesystem|javascript|view-source):)[^\s"'<>`]*/gi;

/**
 * The text with every URL of a page the tools refuse cut to scheme + host (redactedUrl): for
 * Chrome's own error texts passed on to the agent, which name the page they failed on (`Cannot
 * access contents of url "chrome-extension://…/sidepanel.html?…"`).
 */
export function scrubRefusedUrls(text: string): string {
  return text.replace(URL_IN_TEXT, shownUrl);
}

/** Throws invalid_arguments when a tool may not open `url`; returns the normalized href. */
export function assertUrlAllowed(url: unknown, what = 'url'): string {
  const s = String(url);
  let href: string;
  try {
    href = new URL(s).href;
  } catch {
    throw new ToolError(`Invalid ${what} "${s}": expected an absolute URL such as https://example.com`, { code: 'invalid_arguments', category: 'validation' });
  }
  // Not a page at all: code to run in whatever the tab shows.
  if (href.toLowerCase().startsWith('javascript:')) throw new ToolError(`Invalid ${what} "${shorten(s)}": javascript: URLs are not allowed`, { code: 'invalid_arguments', category: 'validation' });
  const why = refusalReason(href);
  if (why) throw new ToolError(`Tools may not open ${JSON.stringify(shorten(s))}: ${why}. ${allowedText()}`, { code: 'page_not_allowed', category: 'auth' });
  return href;
}

const allowedText = () => `Allowed: http(s) pages, about:blank${state.allowFileUrls ? ' and file:// outside hidden folders and the OpenTabs config folder' : ''}.`;

const shorten = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

/** The URL(s) a tab shows or is loading; a tab is usable only when both are allowed. */
export function tabRefusal(tab: chrome.tabs.Tab): string | null {
  // A tab just created has no committed URL yet, only the one it is loading.
  const current = tab.url || !tab.pendingUrl ? refusalReason(tab.url ?? '') : null;
  if (current) return current;
  return tab.pendingUrl ? refusalReason(tab.pendingUrl) : null;
}

export function tabRefusedError(tabId: number, why: string): ToolError {
  return new ToolError(`Tools may not use tab ${tabId}: ${why}. ${allowedText()}`, { code: 'page_not_allowed', category: 'auth' });
}

/** The tab, or tab_closed naming it (or the id Chrome gave it when it discarded it: tab-lookup.ts). */
const getTabOrFail = (tabId: number): Promise<chrome.tabs.Tab> => getTab(tabId);

/** A tab just opened may not know its URL yet (file:// has no pendingUrl): wait, bounded, for one. */
async function tabWithUrl(tabId: number): Promise<chrome.tabs.Tab> {
  const deadline = Date.now() + TAB_URL_WAIT_MS;
  for (;;) {
    const tab = await getTabOrFail(tabId);
    if (tab.url || tab.pendingUrl || Date.now() >= deadline) return tab;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Throws page_not_allowed unless the tab's current (and pending) URL is allowed right now. */
export async function assertTabAllowed(tabId: number): Promise<chrome.tabs.Tab> {
  const tab = await tabWithUrl(tabId);
  const why = tabRefusal(tab);
  if (why) throw tabRefusedError(tabId, why);
  return tab;
}

/**
 * The sites approved calls running now were approved for, by tab (run.ts pins them for the call's
 * duration). The dispatch guard checks the tab's site once, before the handler; a navigation that
 * commits after that check would carry the approved action to a page the user never saw on the
 * card. So every page action of a call on a pinned tab checks the document it goes to, right
 * where it goes: checkedScriptTarget (chrome.scripting), checkedDocument in debugger.ts (DevTools).
 * A tab with several pins (approved calls running at once) must show all their sites, i.e. one.
 */
const approvedSites = new Map<number, Map<number, string>>();
let pinCount = 0;

/** While the returned function is not called, page actions on tab `tabId` go only to documents of `approvedUrl`'s site. */
export function pinApprovedSite(tabId: number, approvedUrl: string): () => void {
  const key = ++pinCount;
  let pins = approvedSites.get(tabId);
  if (!pins) approvedSites.set(tabId, (pins = new Map()));
  pins.set(key, siteOf(approvedUrl));
  return () => {
    pins.delete(key);
    if (pins.size === 0 && approvedSites.get(tabId) === pins) approvedSites.delete(tabId);
  };
}

function approvalMismatch(tabId: number, shown: string, approved: string): ToolError {
  return new ToolError(`Tab ${tabId} shows ${redactedUrl(shown)} now, not ${redactedUrl(approved)} where this call was approved; it did not run. Call it again to ask again.`, { code: 'tab_mismatch', category: 'validation' });
}

/** Throws tab_mismatch when an approved call runs on the tab and `url` (the document about to be used) is of another site. */
export function assertApprovedSite(tabId: number, url: string): void {
  const pins = approvedSites.get(tabId);
  if (!pins) return;
  const site = siteOf(url);
  for (const approved of pins.values()) if (site !== approved) throw approvalMismatch(tabId, url, approved);
}

/**
 * The tab's top document, checked: scripts are injected into exactly this document
 * (`documentIds`), so a navigation between the check and the injection cannot redirect them.
 * For an approved call the document must also be of the approved site.
 */
export async function checkedScriptTarget(tabId: number): Promise<{ tabId: number; documentIds?: string[] }> {
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  if (!frame?.documentId) {
    const tab = await assertTabAllowed(tabId);
    for (const u of [tab.url, tab.pendingUrl]) if (u) assertApprovedSite(tabId, u);
    return { tabId };
  }
  const why = refusalReason(frame.url);
  if (why) throw tabRefusedError(tabId, why);
  assertApprovedSite(tabId, frame.url);
  return { tabId, documentIds: [frame.documentId] };
}

/**
 * Built-in tools that take a tabId but never touch the page's content: closing it, or navigating
 * it to an allowed URL (the argument is checked), e.g. leaving the New Tab page.
 */
const TAB_TOOLS_WITHOUT_PAGE_ACCESS: ReadonlySet<string> = new Set(['browser_close_tab', 'browser_navigate_tab']);

/** What an approval is for: the origin of an http(s) page, the whole URL (without fragment) of any other. */
export function siteOf(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
    u.hash = '';
    return u.href;
  } catch {
    return raw;
  }
}

/**
 * The check every built-in call goes through before its handler runs (background/main.ts):
 * a `url` argument must be allowed, and so must the current page of any tab it names. A call the
 * user approved for a page (`approvedUrl`, the URL the card showed) runs only while its tab still
 * shows that site: the agent could have navigated the tab while the card waited (and, pinned by
 * run.ts with pinApprovedSite, each of its page actions checks that again on the document it uses).
 * Returns the tabs it looked up and allowed (the handler's ctx.tab reuses them).
 */
export async function guardBuiltinCall(tool: string, input: Record<string, unknown>, dispatchTabId: number | undefined, approvedUrl?: string): Promise<Map<number, chrome.tabs.Tab>> {
  if (input.url !== undefined && tool !== 'browser_get_cookies' && tool !== 'browser_set_cookie' && tool !== 'browser_delete_cookies') assertUrlAllowed(input.url);
  const tabIds = new Set<number>();
  if (typeof input.tabId === 'number') tabIds.add(input.tabId);
  if (typeof dispatchTabId === 'number') tabIds.add(dispatchTabId);
  const checked = new Map<number, chrome.tabs.Tab>();
  if (TAB_TOOLS_WITHOUT_PAGE_ACCESS.has(tool)) return checked;
  for (const id of tabIds) checked.set(id, await assertTabAllowed(id));
  if (approvedUrl !== undefined) {
    const approved = siteOf(approvedUrl);
    for (const [id, tab] of checked) {
      const now = [tab.url, tab.pendingUrl].filter((u): u is string => !!u);
      const moved = now.find((u) => siteOf(u) !== approved);
      if (moved !== undefined) throw approvalMismatch(id, moved, approvedUrl);
    }
  }
  return checked;
}
