/**
 * Approval cards: what the call touches first (tool, plugin, tab, URL, domain), then its
 * arguments (short ones first) cut at APPROVAL_ARGS_PREVIEW_CHARS with a mark and a "Show all"
 * button, then Allow / Deny / Always allow.
 *
 * A card's buttons work only once the card has stayed where it is for APPROVAL_ARM_MS. The agent
 * decides when cards come and go (it cancels its own waiting calls), and every card has Allow at
 * the same place: cancelling the card above the one the user is about to click moves the next
 * card's Allow under the pointer, and a new card pushes the sections below it (the activity list's
 * Stop) down under it. Until the card has been still that long, its buttons are disabled, so a
 * click aimed at what was there before does nothing. The same wait starts again when the
 * browser's windows change: a window over the panel that goes away puts the card under a click
 * aimed at that window, and so does a page's popup (a select's list) drawn over the panel
 * (arming.ts).
 *
 * A built-in the Tools section marks with a risk (runs any code, reads cookies …), and a plugin
 * tool its author marks destructive (the server sends the card's `risk`), have that mark on their
 * card, and their Always allow asks once more before it stores `auto`.
 */
import { APPROVAL_ARGS_PREVIEW_CHARS } from '../../server/protocol/limits.ts';
import type { PendingConfirmation } from '../shared/panel-protocol.ts';
import { ARM_MS, forgetOthers, stillFor } from './arming.ts';
import { cardTabChange } from './card-tabs.ts';
import { h, showHidden } from './dom.ts';

/** Characters of a target line (URL, domain) shown before it is cut: the site comes first in them. */
const TARGET_PREVIEW_CHARS = 300;

/**
 * A target line as the user must read it: a URL or a domain may come from the agent's arguments
 * (a built-in's `url`, `origin`, `domain`), so invisible and direction-changing characters are
 * written as \uXXXX as in the arguments, and a long one is cut with a mark, so it can neither
 * read as another site nor push the arguments and buttons away.
 */
function targetText(s: string): string {
  const shown = showHidden(s);
  if (shown.length <= TARGET_PREVIEW_CHARS) return shown;
  const more = shown.length - TARGET_PREVIEW_CHARS;
  return `${shown.slice(0, TARGET_PREVIEW_CHARS)} … ${more.toLocaleString('en-US')} more character${more === 1 ? '' : 's'}`;
}

/** Where the tool comes from: built-in, a plugin, or a web page's own tools (WebMCP, plugin "page:<origin>"). */
function who(plugin: string): string {
  if (plugin === 'browser') return 'built-in';
  return plugin.startsWith('page:') ? `page tool · ${plugin.slice('page:'.length)}` : `plugin ${plugin}`;
}

function approvalTarget(p: PendingConfirmation, risk: string | undefined): HTMLElement {
  const t = p.target ?? {};
  const lines: HTMLElement[] = [
    h('div', { class: 'row' }, h('strong', { class: 'name', 'data-testid': 'approval-tool' }, p.tool), h('span', { class: 'muted', 'data-testid': 'approval-plugin' }, who(p.plugin))),
  ];
  // What the Tools section marks the built-in with (runs any code, deletes a site's data …), or the server's mark of a destructive plugin tool.
  if (risk) lines.push(h('div', { class: 'risk', 'data-testid': 'approval-risk' }, `⚠ ${risk}`));
  // A page tool new or changed since Always allow was chosen for its origin (the server's words).
  if (p.note) lines.push(h('div', { class: 'risk', 'data-testid': 'approval-note' }, `⟳ ${p.note}`));
  if (t.domain) lines.push(h('div', { class: 'domain', 'data-testid': 'approval-domain' }, targetText(t.domain)));
  if (t.url) lines.push(h('div', { class: 'url', 'data-testid': 'approval-url' }, targetText(t.url)));
  if (t.tabId !== undefined) lines.push(h('div', { class: 'muted', 'data-testid': 'approval-tab' }, `Tab ${t.tabId}`));
  const change = t.tabId !== undefined ? cardTabChange(p.id) : null;
  if (change) {
    const runs = p.plugin.startsWith('page:') ? 'A page tool runs only in the page named above.' : 'The call runs only while the tab shows the site named above.';
    lines.push(
      h(
        'div',
        { class: 'warning', 'data-testid': 'approval-tab-changed' },
        'closed' in change ? `Tab ${t.tabId} was closed since this card appeared: the call cannot run.` : `Tab ${t.tabId} has moved to ${targetText(change.url)} since this card appeared. ${runs}`,
      ),
    );
  }
  if (t.candidateTabs?.length) {
    lines.push(h('div', { class: 'muted' }, 'Runs in one of these tabs:'));
    for (const c of t.candidateTabs) lines.push(h('div', { class: 'url', 'data-testid': 'approval-candidate' }, `Tab ${c.tabId}: ${targetText(c.url)}`));
  }
  if (!t.url && t.tabId === undefined && !t.candidateTabs?.length) lines.push(h('div', { class: 'muted', 'data-testid': 'approval-no-target' }, 'No tab named: the tool picks one (e.g. the active tab)'));
  return h('div', { class: 'target', 'data-testid': 'approval-target' }, ...lines);
}


/** An argument whose JSON is at most this long is listed before the longer ones. */
const SHORT_ARG_CHARS = 200;

/**
 * Top-level arguments with the short ones first (in their order), then the long ones: the agent
 * chooses the order of its arguments, and a long one first (a selector of thousands of
 * characters) would push the ones that say what happens (the files, the URL, the tab) past the
 * cut.
 */
function shortFirst(params: unknown): unknown {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return params;
  const short: [string, unknown][] = [];
  const long: [string, unknown][] = [];
  for (const [k, v] of Object.entries(params)) ((JSON.stringify(v) ?? '').length <= SHORT_ARG_CHARS ? short : long).push([k, v]);
  return Object.fromEntries([...short, ...long]);
}

/** Cards whose arguments the user asked to see whole (kept across re-renders). */
const shownWhole = new Set<string>();

/**
 * The arguments, cut at APPROVAL_ARGS_PREVIEW_CHARS with a mark and a button that shows them
 * whole: what is past the cut (the end of a script) is what runs too, and the user must be able
 * to read it before allowing. The text is drawn whole in the card, never in a box of its own that
 * scrolls (sidepanel.css): the end of a script inside the preview would sit out of sight below
 * its first lines, with no mark and, where scroll bars hide, no sign of it, above an Allow that
 * works. The buttons come after the last character shown.
 */
function approvalArgs(p: PendingConfirmation): HTMLElement[] {
  const text = showHidden(JSON.stringify(shortFirst(p.params), null, 1) ?? 'null');
  if (text.length <= APPROVAL_ARGS_PREVIEW_CHARS || shownWhole.has(p.id)) return [h('pre', { 'data-testid': 'approval-args' }, text)];
  const more = text.length - APPROVAL_ARGS_PREVIEW_CHARS;
  const pre = h('pre', { 'data-testid': 'approval-args' }, text.slice(0, APPROVAL_ARGS_PREVIEW_CHARS));
  const mark: HTMLElement = h(
    'div',
    { class: 'truncated', 'data-testid': 'approval-truncated' },
    `… ${more.toLocaleString('en-US')} more character${more === 1 ? '' : 's'} not shown `,
    h('button', {
      class: 'link',
      'data-testid': 'approval-show-all',
      onclick: () => {
        shownWhole.add(p.id);
        pre.textContent = text;
        mark.remove();
      },
    }, 'Show all'),
  );
  return [pre, mark];
}

/**
 * Button labels: what "Always allow" stores, said on the button. A page tool (WebMCP, plugin
 * "page:<origin>") is permitted per origin: `auto` for the tools that origin offers now, as they are
 * now (one it adds or changes later asks again). A built-in tool
 * is permitted as a whole: `auto` on every site, not only the one the card names (a card for a
 * cookie on one bank must not read as "always for this bank"). A plugin tool: `auto` for that tool.
 */
function approvalLabels(plugin: string): { allow: string; always: string } {
  if (plugin.startsWith('page:')) return { allow: 'Allow once', always: `Always allow ${plugin.slice('page:'.length)}` };
  if (plugin === 'browser') return { allow: 'Allow once', always: 'Always allow, on every site' };
  return { allow: 'Allow once', always: 'Always allow this tool' };
}

/**
 * The risk a card shows, and whether its Always allow asks once more: the server's `risk` (a plugin
 * tool marked destructive), else a built-in's mark from the Tools section.
 */
export function approvalRisk(p: PendingConfirmation, risks: ReadonlyMap<string, string>): string | undefined {
  return p.risk || (p.plugin === 'browser' ? risks.get(p.tool) : undefined);
}

/** What Always allow covers, as the question says it after the tool's name. */
function alwaysScope(plugin: string): string {
  if (plugin === 'browser') return ', on every site';
  if (plugin.startsWith('page:')) return ` and the other tools ${plugin.slice('page:'.length)} offers now (one it adds or changes later asks again)`;
  return '';
}

/**
 * Cards with a risk (a marked built-in: runs any code, reads cookies, deletes a site's data …; a
 * plugin tool marked destructive) whose Always allow was pressed once: the card asks again before
 * storing `auto`. One click on such a card would otherwise stop every approval of that tool, for
 * good, the same click as Allow once a button away. The question's buttons are new: they wait
 * APPROVAL_ARM_MS from when they appear (the card's arming key changes), so a double click on
 * Always allow does not answer it.
 */
const confirmingAlways = new Set<string>();

/** The arming key of a card: another one while it asks about Always allow (its buttons are new). */
function armKey(card: HTMLElement): string {
  return `approval:${card.dataset.confirmation!}${card.dataset.asking === 'always' ? ':always' : ''}`;
}

/** How long a card must stay in place before its buttons work. */
export const APPROVAL_ARM_MS = ARM_MS;

let armTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * Measures every card in `root` and disables the buttons of those that appeared or moved less
 * than APPROVAL_ARM_MS ago (enabling them again once that has passed). Run after each render, as
 * anything above the cards may change their place, and at each click (a shift no render saw).
 */
export function armApprovalButtons(root: ParentNode = document): void {
  const seen = new Set<string>();
  let nextCheck = Infinity;
  for (const card of root.querySelectorAll<HTMLElement>('.card.approval[data-confirmation]')) {
    const key = armKey(card);
    seen.add(key);
    const wait = APPROVAL_ARM_MS - stillFor(key, card);
    const armed = wait <= 0;
    for (const b of card.querySelectorAll<HTMLButtonElement>('.buttons button')) {
      b.disabled = !armed;
      if (armed) b.removeAttribute('title');
      else b.title = 'This card just appeared or moved, or something over the panel just went away; its buttons work in a moment';
    }
    if (!armed) nextCheck = Math.min(nextCheck, wait);
  }
  forgetOthers('approval:', seen);
  if (armTimer !== null) clearTimeout(armTimer);
  armTimer = nextCheck === Infinity ? null : setTimeout(() => {
    armTimer = null;
    armApprovalButtons(root);
  }, Math.ceil(nextCheck) + 10);
}

/** Whether `button`'s card has been still long enough (measured now) for a click to count. */
function armedNow(button: EventTarget | null): boolean {
  if (!(button instanceof HTMLButtonElement) || !button.isConnected) return false;
  armApprovalButtons(document);
  return !button.disabled;
}

/**
 * `risks`: the built-in tools' risk marks by name (the Tools section's ⚠ lines). `rerender` draws
 * the panel again (a card that starts asking about Always allow).
 */
export function renderApprovals(
  pending: PendingConfirmation[],
  decide: (id: string, decision: 'allow' | 'deny', alwaysAllow?: boolean) => void,
  risks: ReadonlyMap<string, string> = new Map(),
  rerender: () => void = () => {},
): HTMLElement[] {
  for (const id of [...shownWhole]) if (!pending.some((p) => p.id === id)) shownWhole.delete(id);
  for (const id of [...confirmingAlways]) if (!pending.some((p) => p.id === id)) confirmingAlways.delete(id);
  if (pending.length === 0) return [];
  const out: HTMLElement[] = [h('h2', {}, `Waiting for approval (${pending.length})`)];
  for (const p of pending) {
    const on = (decision: 'allow' | 'deny', always?: boolean) => (e: Event) => {
      if (armedNow(e.currentTarget)) decide(p.id, decision, always);
    };
    if (p.interaction) {
      out.push(interactionCard(p, on));
      continue;
    }
    const risk = approvalRisk(p, risks);
    const labels = approvalLabels(p.plugin);
    const asking = risk !== undefined && confirmingAlways.has(p.id);
    const always = risk === undefined
      ? h('button', { 'data-action': 'always', 'data-testid': 'always-allow', onclick: on('allow', true) }, labels.always)
      : h('button', {
          'data-action': 'always',
          'data-testid': 'always-allow',
          onclick: (e: Event) => {
            if (!armedNow(e.currentTarget)) return;
            confirmingAlways.add(p.id);
            rerender();
          },
        }, labels.always);
    out.push(
      h(
        'div',
        { class: 'card approval', 'data-confirmation': p.id, 'data-testid': `confirm-${p.tool}`, 'data-asking': asking ? 'always' : undefined },
        approvalTarget(p, risk),
        ...approvalArgs(p),
        asking
          ? h(
              'div',
              { class: 'warning', 'data-testid': 'always-allow-question' },
              `Never ask again for ${p.tool}${alwaysScope(p.plugin)}? It ${risk}. Allow once, or Deny, answers this call only.`,
            )
          : null,
        h(
          'div',
          { class: 'buttons' },
          h('button', { class: 'primary', 'data-action': 'allow', 'data-testid': 'allow', onclick: on('allow') }, labels.allow),
          h('button', { class: 'danger', 'data-action': 'deny', 'data-testid': 'deny', onclick: on('deny') }, 'Deny'),
          asking
            ? h('button', { 'data-action': 'always-confirm', 'data-testid': 'always-allow-confirm', onclick: on('allow', true) }, 'Yes, never ask again')
            : always,
        ),
      ),
    );
  }
  return out;
}

/**
 * A page tool asking for the user's input while it runs (requestUserInteraction): no call to
 * approve, no Always allow. Continue shows the tab (brought to the front now, not before) and lets
 * the page go on; Decline fails the call. Armed like every approval card.
 */
function interactionCard(p: PendingConfirmation, on: (decision: 'allow' | 'deny') => (e: Event) => void): HTMLElement {
  const origin = p.plugin.startsWith('page:') ? p.plugin.slice('page:'.length) : p.plugin;
  const t = p.target ?? {};
  return h(
    'div',
    { class: 'card approval', 'data-confirmation': p.id, 'data-testid': `interaction-${p.tool}` },
    h('div', { class: 'row', 'data-testid': 'interaction-question' }, `${targetText(origin)} asks for your input during ${showHidden(p.tool)}`),
    h('div', { class: 'muted' }, 'Continue brings its tab to the front and lets the page show you what it asks; Decline stops the call.'),
    t.url ? h('div', { class: 'url', 'data-testid': 'approval-url' }, targetText(t.url)) : null,
    t.tabId !== undefined ? h('div', { class: 'muted', 'data-testid': 'approval-tab' }, `Tab ${t.tabId}`) : null,
    h(
      'div',
      { class: 'buttons' },
      h('button', { class: 'primary', 'data-action': 'allow', 'data-testid': 'allow', onclick: on('allow') }, 'Show the tab and continue'),
      h('button', { class: 'danger', 'data-action': 'deny', 'data-testid': 'deny', onclick: on('deny') }, 'Decline'),
    ),
  );
}
