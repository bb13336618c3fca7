/**
 * extension/tools/url-policy.ts as a pure function: which URLs built-in tools may use, including
 * the spellings that try to sneak a refused page past a string check.
 */
import { afterEach, describe, expect, test } from 'bun:test';
import { insideProtectedFolder, redactedUrl, refusalReason, resolveFileUrls, setFileResolver, setUrlPolicy } from '../../extension/tools/url-policy.ts';

/** The server's answer where no path is a link: each leads where it is written. */
const asWritten = async (paths: string[]) => ({ real: paths });

afterEach(() => setUrlPolicy({}));

describe('url policy', () => {
  test('http(s) and about:blank are allowed', () => {
    for (const u of ['http://127.0.0.1:8080/x?y#z', 'https://example.com/', 'about:blank', 'about:blank#top', 'HTTPS://EXAMPLE.COM']) expect(refusalReason(u)).toBeNull();
  });

  test('extension, browser, data/blob/filesystem and store pages are refused', () => {
    const refused = [
      'chrome-extension://abcdefghijklmnopabcdefghijklmnop/sidepanel.html',
      'Chrome-Extension://abcdefghijklmnopabcdefghijklmnop/auth.json',
      'chrome://settings',
      'chrome-untrusted://terminal/',
      'devtools://devtools/bundled/inspector.html',
      'view-source:https://example.com/',
      'about:settings',
      'about:srcdoc',
      'edge://settings',
      'brave://settings',
      'opera://settings',
      'data:text/html,hi',
      'blob:https://example.com/0c1d2e3f',
      'filesystem:https://example.com/temporary/x',
      'javascript:alert(1)',
      'ws://127.0.0.1/',
      'ftp://example.com/',
      'https://chromewebstore.google.com/detail/x/y',
      'https://chromewebstore.google.com./detail/x/y',
      'https://CHROME.google.com../webstore/detail/x',
      'https://chrome.google.com/webstore/detail/x',
      'https://microsoftedge.microsoft.com/addons/detail/x',
      '',
      'not a url',
    ];
    for (const u of refused) expect(refusalReason(u)).not.toBeNull();
    // Lookalikes of the store are ordinary sites.
    expect(refusalReason('https://chrome.google.com/webstorefront')).toBeNull();
    expect(refusalReason('https://chromewebstore.google.com.example.com/')).toBeNull();
  });

  test('file:// is refused until allowed, and the config folder always', async () => {
    expect(refusalReason('file:///home/u/notes.html')).toMatch(/allowFileUrls/);
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/u/.opentabs'] });
    setFileResolver(asWritten);
    await resolveFileUrls(['file:///home/u/notes.html', 'file:///home/u/opentabs-other/x', 'file:///home/u/not.hidden/a.b.html']);
    expect(refusalReason('file:///home/u/notes.html')).toBeNull();
    expect(refusalReason('file://localhost/home/u/notes.html')).toBeNull();
    expect(refusalReason('file:///home/u/opentabs-other/x')).toBeNull();
    expect(refusalReason('file:///home/u/not.hidden/a.b.html')).toBeNull();
    // Hidden files and folders: configuration and credentials.
    for (const u of ['file:///home/u/.opentabs-other/x', 'file:///home/u/.claude.json', 'file:///home/u/.config/opencode/opencode.json', 'file:///home/u/p/.cursor/mcp.json', 'file:///home/u/.ssh/id_ed25519', 'file:///home/u/%2Eaws/credentials', 'file:///home/u/x/..%2F.ssh/config', 'file:///C:/Users/U/.aws/credentials']) {
      expect(refusalReason(u)).toContain('hidden');
    }
    for (const u of [
      'file:///home/u/.opentabs',
      'file:///home/u/.opentabs/',
      'file:///home/u/.opentabs/extension/auth.json',
      'file:///home/u/x/../.opentabs/extension/auth.json',
      'file:///home/u/%2Eopentabs/extension/auth.json',
      'file:///home/u/.opentabs%2Fextension%2Fauth.json',
      'file:///home/u/.opentabs/extension/%2e%2e/extension/auth.json',
      'file:///HOME/U/.OPENTABS/extension/auth.json',
      'file://localhost/home/u/.opentabs/config.json',
      'file://fileserver/share/x',
    ]) {
      expect(refusalReason(u)).not.toBeNull();
    }
  });

  test('insideProtectedFolder (plugin injection) ignores allowFileUrls', () => {
    setUrlPolicy({ allowFileUrls: false, protectedPaths: ['/home/u/.opentabs'] });
    expect(insideProtectedFolder('file:///home/u/.opentabs/extension/auth.json')).toBe(true);
    expect(insideProtectedFolder('file:///home/u/%2Eopentabs/extension/auth.json')).toBe(true);
    expect(insideProtectedFolder('file:///home/u/notes.html')).toBe(false);
    expect(insideProtectedFolder('https://example.com/home/u/.opentabs/')).toBe(false);
  });

  test('Windows config folders are matched whatever the slashes and case', async () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['C:\\Users\\U\\.opentabs'] });
    setFileResolver(asWritten);
    await resolveFileUrls(['file:///C:/Users/U/Documents/a.html']);
    expect(refusalReason('file:///C:/Users/U/.opentabs/extension/auth.json')).not.toBeNull();
    expect(refusalReason('file:///c:/users/u/.OpenTabs/extension/auth.json')).not.toBeNull();
    expect(refusalReason('file:///C:/Users/U/Documents/a.html')).toBeNull();
  });

  test('Windows: names with trailing dots or spaces and short (8.3) names do not get past the checks', async () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['C:\\Users\\U\\otcfg'] });
    setFileResolver(asWritten);
    const refused = [
      // Windows opens these as the names without the trailing dots and spaces.
      'file:///C:/Users/U/AppData/Roaming/Claude/claude_desktop_config.json.',
      'file:///C:/Users/U/AppData/Roaming/Claude/claude_desktop_config.json%20',
      'file:///C:/Users/U/project/opencode.json..',
      'file:///C:/Users/U/otcfg./extension/auth.json',
      'file:///C:/Users/U/otcfg%20/extension/auth.json',
      // An NTFS stream name: ::$DATA is the file's own content.
      'file:///C:/Users/U/AppData/Roaming/Claude/claude_desktop_config.json::$DATA',
      // Short names of .opentabs, .ssh and .claude.json.
      'file:///C:/Users/U/OPENTA~1/extension/auth.json',
      'file:///C:/Users/U/SSH~1/id_rsa',
      'file:///C:/Users/U/CLAUDE~1.JSO',
    ];
    const allowed = ['file:///C:/Users/U/Documents/a.html', 'file:///C:/Users/U/Documents/v1.2.html', 'file:///C:/Users/U/Documents/notes~draft.txt'];
    await resolveFileUrls([...refused, ...allowed]);
    for (const u of refused) expect(refusalReason(u) ?? `allowed: ${u}`).not.toMatch(/^allowed/);
    for (const u of allowed) expect(refusalReason(u)).toBeNull();
    expect(insideProtectedFolder('file:///C:/Users/U/otcfg./extension/auth.json')).toBe(true);
    expect(insideProtectedFolder('file:///C:/Users/U/OPENTA~1/extension/auth.json')).toBe(true);
    // Not a drive path: a POSIX name may end in a dot or hold ~1.
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/u/.opentabs'] });
    await resolveFileUrls(['file:///home/u/v1./a.html', 'file:///home/u/BACKUP~1/a.html']);
    expect(refusalReason('file:///home/u/v1./a.html')).toBeNull();
    expect(refusalReason('file:///home/u/BACKUP~1/a.html')).toBeNull();
  });

  test('file:// is judged by where its path leads too (symbolic links), and refused until that is known', async () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/u/.opentabs'] });
    expect(refusalReason('file:///home/u/p/never-asked.html')).toMatch(/not checked yet/);
    const links: Record<string, string> = { '/home/u/p/notes.txt': '/home/u/.ssh/id_rsa', '/home/u/p/keys/a': '/home/u/.ssh/a', '/home/u/p/cfg': '/home/u/.opentabs/extension/auth.json', '/home/u/p/oc': '/home/u/x/opencode.json', '/home/u/p/ok.txt': '/home/u/docs/readme.txt' };
    setFileResolver(async (paths) => ({ real: paths.map((p) => links[p] ?? p) }));
    await resolveFileUrls(Object.keys(links).map((p) => `file://${p}`));
    for (const p of ['/home/u/p/notes.txt', '/home/u/p/keys/a', '/home/u/p/cfg', '/home/u/p/oc']) expect(refusalReason(`file://${p}`) ?? `allowed: ${p}`).toMatch(/symbolic link/);
    expect(refusalReason('file:///home/u/p/ok.txt')).toBeNull();
    expect(insideProtectedFolder('file:///home/u/p/cfg')).toBe(true);
  });

  test('a file with more than one name (a hard link) is refused; asked again once it has one name, it opens', async () => {
    setUrlPolicy({ allowFileUrls: true, protectedPaths: ['/home/u/.opentabs'] });
    let linked = true;
    setFileResolver(async (paths) => ({ real: paths, linked: paths.map((p) => linked && p === '/home/u/p/hard.txt') }));
    await resolveFileUrls(['file:///home/u/p/hard.txt', 'file:///home/u/p/one.txt']);
    expect(refusalReason('file:///home/u/p/hard.txt') ?? 'allowed').toMatch(/hard link/);
    expect(refusalReason('file:///home/u/p/one.txt')).toBeNull();
    linked = false;
    await resolveFileUrls(['file:///home/u/p/hard.txt']);
    expect(refusalReason('file:///home/u/p/hard.txt')).toBeNull();
  });

  test('refused tabs are listed with scheme and host only', () => {
    expect(redactedUrl('chrome-extension://abc/auth.json?x=1')).toBe('chrome-extension://abc/');
    expect(redactedUrl('file:///home/u/.opentabs/extension/auth.json')).toBe('file:');
    expect(redactedUrl('data:text/html,secret')).toBe('data:');
    expect(redactedUrl('https://chromewebstore.google.com/detail/x')).toBe('https://chromewebstore.google.com/');
  });
});
