/**
 * Activity: calls running now (tool, plugin or "browser", the tab's title and origin, elapsed
 * time, a progress bar when the tool reports progress, Stop), then the last finished ones
 * (status, duration, error; expand for the masked arguments summary).
 *
 * A page tool's name here is the one the page gave it (any characters, up to 128), and the tab's
 * title is the page's too: both show hidden and direction-changing characters as \uXXXX.
 */
import type { ActivityCall, ActivityDone } from '../shared/panel-protocol.ts';
import { formatDuration, h, showHidden } from './dom.ts';

/** History entries the user expanded (kept across re-renders). */
const expanded = new Set<string>();

function who(c: ActivityCall): string {
  return c.plugin === 'browser' ? 'browser' : c.plugin.startsWith('page:') ? `page tool · ${c.plugin.slice(5)}` : `plugin ${c.plugin}`;
}

/**
 * The tab a call acted on: its origin first (the browser's), then its title (the page's own, which
 * could read like another site's name: "Bank — https://bank.example").
 */
function where(c: ActivityCall): HTMLElement | null {
  if (c.tabId === undefined) return null;
  const title = c.tabTitle ? showHidden(c.tabTitle) : `Tab ${c.tabId}`;
  return h('div', { class: 'muted where', title: `Tab ${c.tabId}` }, c.origin ? `${c.origin} — ${title}` : title);
}

function progressBar(c: ActivityCall): HTMLElement | null {
  const p = c.progress;
  if (!p) return null;
  const pct = p.total && p.total > 0 ? Math.max(0, Math.min(100, Math.round((p.progress / p.total) * 100))) : null;
  return h(
    'div',
    { class: 'progress', 'data-testid': 'activity-progress' },
    pct !== null ? h('progress', { max: 100, value: pct }) : h('progress'),
    h('span', { class: 'muted' }, `${pct !== null ? `${pct}%` : String(p.progress)}${p.message ? ` ${showHidden(p.message)}` : ''}`),
  );
}

export function renderActivity(running: ActivityCall[], history: ActivityDone[], stop: (dispatchId: string) => void): HTMLElement[] {
  const out: HTMLElement[] = [];
  out.push(h('h2', {}, running.length ? `Running now (${running.length})` : 'Activity'));
  if (running.length === 0 && history.length === 0) out.push(h('div', { class: 'detail', 'data-testid': 'activity-idle' }, 'No tool calls yet. What the agent does shows up here.'));
  for (const c of running) {
    out.push(
      h(
        'div',
        { class: 'card call running-call', 'data-testid': 'activity-running', 'data-dispatch': c.dispatchId, 'data-tool': c.tool },
        h('div', { class: 'row' }, h('strong', { class: 'name' }, showHidden(c.tool)), h('span', { class: 'muted elapsed', 'data-started': c.startedAt }, formatDuration(Date.now() - c.startedAt))),
        h('div', { class: 'muted' }, who(c)),
        where(c),
        progressBar(c),
        h('div', { class: 'buttons' }, h('button', { class: 'danger', 'data-testid': 'activity-stop', onclick: () => stop(c.dispatchId) }, 'Stop')),
      ),
    );
  }
  if (history.length) {
    if (running.length) out.push(h('h2', {}, 'Recent'));
    const list = h('div', { class: 'card history' });
    for (const c of history) {
      const details = h(
        'details',
        { 'data-testid': 'activity-done', 'data-dispatch': c.dispatchId, 'data-status': c.status, open: expanded.has(c.dispatchId) },
        h(
          'summary',
          {},
          h('span', { class: `status status-${c.status}`, title: c.status }, c.status === 'ok' ? '✓' : c.status === 'cancelled' ? '■' : '✗'),
          ' ',
          h('span', { class: 'name' }, showHidden(c.tool)),
          ' ',
          h('span', { class: 'muted' }, formatDuration(c.durationMs)),
        ),
        h('div', { class: 'muted' }, who(c)),
        where(c),
        c.error ? h('div', { class: 'error', 'data-testid': 'activity-error' }, showHidden(c.error)) : null,
        h('pre', { 'data-testid': 'activity-args' }, showHidden(c.args)),
      );
      details.addEventListener('toggle', () => {
        if ((details as HTMLDetailsElement).open) expanded.add(c.dispatchId);
        else expanded.delete(c.dispatchId);
      });
      list.append(details);
    }
    out.push(list);
  }
  return out;
}

/** Elapsed times tick without a full re-render. */
export function tickElapsed(): void {
  for (const el of document.querySelectorAll<HTMLElement>('.elapsed[data-started]')) {
    el.textContent = formatDuration(Date.now() - Number(el.dataset.started));
  }
}
