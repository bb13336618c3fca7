/**
 * Record an app's API traffic to draft a plugin from it: capture (with bodies) on the tab the
 * button names (the active tab of the panel's window, by id and origin), then the command that
 * turns the recording into a plugin project.
 */
import { fitPluginName } from '../../server/protocol/plugin-name.ts';
import { h, showHidden } from './dom.ts';

/**
 * The plugin name the printed `plugin create` command suggests for a recorded origin: its host's
 * first word ("app" of app.example.com, www skipped), fitted to a name the command accepts
 * ("-x-" → "x", "browser" → "browser-app"), else "my-app" — so the command runs as printed.
 */
export function recordPluginName(origin: string): string {
  let word = '';
  try {
    word = new URL(origin).hostname.split('.').find((p) => p !== '' && p !== 'www') ?? '';
  } catch {
    // not a URL: the default below
  }
  // No host word (an IPv6 address, no URL): the default.
  if (word === '' || word.startsWith('[')) return 'my-app';
  return fitPluginName(word) ?? fitPluginName(`${word}-app`) ?? 'my-app';
}

export function renderRecording(
  recording: { tabId: number; title: string; origin: string }[],
  error: string | null,
  cli: string,
  /** The tab the button records (the active tab of the panel's window), and the button's arming key. */
  target: { tabId: number; origin: string; armKey: string } | null,
  start: (button: HTMLButtonElement) => void,
  stop: (tabId: number) => void,
): HTMLElement[] {
  const out: HTMLElement[] = [h('h2', {}, 'Draft a plugin')];
  const card = h('div', { class: 'card', 'data-testid': 'record' });
  if (recording.length === 0) {
    card.append(
      h('div', { class: 'muted' }, "No plugin for an app? Record what its page does while you use it, and OpenTabs drafts one from that traffic."),
      // The tab it records, by the browser's origin (the page's title could name another site).
      h('div', { 'data-testid': 'record-target' }, target ? `Records tab ${target.tabId}: ${showHidden(target.origin) || 'no page'}` : 'No tab in front to record'),
      // Guarded (main.ts): it starts network capture with bodies, which an agent's call must ask for.
      h('div', { class: 'buttons' }, h('button', { class: 'primary', 'data-testid': 'record-start', 'data-arm-key': target?.armKey ?? 'record-start:none', disabled: target === null, onclick: (e: Event) => start(e.currentTarget as HTMLButtonElement) }, 'Record this tab')),
    );
  }
  for (const r of recording) {
    const name = recordPluginName(r.origin);
    card.append(
      // The origin first (the browser's), then the page's own title, which could read like another
      // site's name ("Bank — https://bank.example") or turn the text after it around (U+202E).
      h('div', { 'data-testid': `recording-${r.tabId}` }, h('strong', {}, '● Recording '), `${r.origin}${r.title ? ` — ${showHidden(r.title)}` : ''} (tab ${r.tabId})`),
      h('div', { class: 'muted' }, 'Use the app (list, open, create, change things), then run in a terminal:'),
      h('pre', { 'data-testid': 'record-command' }, `${cli} plugin create ${name} --from-capture tab:${r.tabId}`),
      h('div', { class: 'buttons' }, h('button', { 'data-testid': 'record-stop', onclick: () => stop(r.tabId) }, 'Stop recording')),
    );
  }
  if (error) card.append(h('div', { class: 'error', 'data-testid': 'record-error' }, showHidden(error)));
  out.push(card);
  return out;
}
