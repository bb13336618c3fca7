/** The windows group of built-in tools. */
import { ToolError } from '../shared/tool-error.ts';
import { listedTab, rememberAgentWindow } from './tabs.ts';
import { assertUrlAllowed } from './url-policy.ts';
import type { Handlers } from './types.ts';

function windowSummary(w: chrome.windows.Window) {
  return {
    id: w.id,
    focused: w.focused,
    state: w.state ?? 'normal',
    type: w.type ?? 'normal',
    incognito: w.incognito,
    left: w.left,
    top: w.top,
    width: w.width,
    height: w.height,
    tabs: (w.tabs ?? []).map(listedTab),
  };
}

/**
 * The focus a new window is created with. Not brought to the front unless asked: a new window
 * over the one the user types in took their keystrokes. Chrome refuses an unfocused maximized
 * window (it is focused all the same) and decides a minimized one's itself unless asked.
 */
function focusOf(state: string | undefined, focused: boolean | undefined): { focused?: boolean } {
  if (state === 'maximized') return focused === undefined ? {} : { focused };
  if (state === 'minimized') return focused === undefined ? {} : { focused };
  return { focused: focused === true };
}

export const windowTools = {
  async browser_list_windows() {
    const windows = await chrome.windows.getAll({ populate: true });
    return { value: { windows: windows.map(windowSummary) } };
  },

  async browser_create_window(input) {
    const url = input.url === undefined ? undefined : assertUrlAllowed(input.url);
    const state = input.state as 'normal' | 'minimized' | 'maximized' | undefined;
    if ((state as string) === 'fullscreen' || (state as string) === 'locked-fullscreen') throw new ToolError('Tools may not make a window full screen (it hides the address bar)', { code: 'invalid_arguments', category: 'validation' });
    // Chrome refuses a size together with a non-normal state.
    const size = state && state !== 'normal' ? {} : { width: input.width, height: input.height };
    let w: chrome.windows.Window | undefined;
    try {
      w = await chrome.windows.create({ url, ...size, state, incognito: input.incognito === true, ...focusOf(state, input.focused) });
    } catch (err) {
      throw new ToolError(`Could not create the window: ${(err as Error).message}`, { code: 'not_available', category: 'validation' });
    }
    if (!w) throw new ToolError('Chrome did not create the window (incognito not allowed for the extension?)', { code: 'not_available', category: 'validation' });
    rememberAgentWindow(w);
    return { value: windowSummary(await chrome.windows.get(w.id!, { populate: true })) };
  },

  async browser_close_window(input) {
    const id = input.windowId;
    try {
      await chrome.windows.get(id);
    } catch {
      throw new ToolError(`No window with id ${id}; call browser_list_windows for current ids`, { code: 'not_found', category: 'not_found' });
    }
    await chrome.windows.remove(id);
    return { value: { closed: true, windowId: id } };
  },
} satisfies Partial<Handlers>;
