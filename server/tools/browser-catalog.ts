/**
 * The built-in browser tools: one declarative entry per tool. The server lists and validates
 * them from here; the extension implements each by name (extension/tools/) and a unit test fails
 * when the two differ. `risk` marks the tools the side panel flags: they run code, read or
 * change cookies and page storage, or record traffic that can hold private data.
 */
import type { Permission } from '../protocol/methods.ts';
import type { ToolAnnotations } from '../protocol/tool-annotations.ts';
import { CAPTURE_BODY_MAX_BYTES, CONSOLE_LOGS_DEFAULT_LIMIT, CONSOLE_LOGS_MAX_LIMIT, NETWORK_CAPTURE_DEFAULT_REQUESTS, NETWORK_CAPTURE_MAX_REQUESTS, WEBSOCKET_FRAMES_MAX } from '../limits.ts';

export interface BrowserToolDef {
  /** browser_* or extension_* */
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12 subset Ajv accepts) for the arguments. */
  inputSchema: Record<string, unknown>;
  defaultPermission: Permission;
  group: 'tabs' | 'windows' | 'reading' | 'acting' | 'console' | 'network' | 'storage' | 'data' | 'extension';
  /** Why this tool deserves care, shown in the side panel (absent for ordinary tools). */
  risk?: string;
  /**
   * Served by the server itself (no extension round trip), e.g. plugin_list_tabs reads hub state.
   * Undefined for tools the extension runs.
   */
  servedBy?: 'server';
}

const tabId = { type: 'integer', minimum: 1, description: 'Tab id from browser_list_tabs' } as const;

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const refSchema = { type: 'string', pattern: '^e[0-9]+$', description: 'Element ref from browser_snapshot' } as const;
const modifiers = { type: 'array', items: { enum: ['Alt', 'Control', 'Meta', 'Shift'] }, uniqueItems: true, description: 'Keys held down during the action' } as const;
/**
 * Schema of a tool acting on one element: tabId + selector or ref + its own fields. "One of
 * selector/ref" is checked by the extension (clear error), not by a combinator at the top of the
 * schema: several MCP clients reject tool schemas that have one.
 */
const target = (properties: Record<string, unknown>, required: string[] = []) =>
  obj({ tabId, selector: { type: 'string', minLength: 1, description: 'CSS selector (pierces open shadow roots)' }, ref: refSchema, ...properties }, ['tabId', ...required]);

const tabIds = { type: 'array', items: { type: 'integer', minimum: 1 }, minItems: 1, maxItems: 100, description: 'Tab ids from browser_list_tabs' } as const;
const groupColor = { enum: ['grey', 'blue', 'red', 'yellow', 'green', 'pink', 'purple', 'cyan', 'orange'], description: 'Group color' } as const;
const limit = (max: number, dflt: number) => ({ type: 'integer', minimum: 1, maximum: max, description: `At most this many (default ${dflt})` }) as const;

export const BROWSER_TOOLS: readonly BrowserToolDef[] = [
  {
    name: 'browser_list_tabs',
    description: 'List open tabs: id, url, title, active, windowId, groupId, status, audible.',
    inputSchema: obj({}),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_open_tab',
    description: 'Open a new tab at a URL.',
    inputSchema: obj(
      {
        url: { type: 'string', minLength: 1, description: 'URL to open' },
        active: { type: 'boolean', description: 'Focus the new tab (default true)' },
        windowId: { type: 'integer', description: 'Window to open it in' },
      },
      ['url'],
    ),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_close_tab',
    description: 'Close a tab.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_navigate_tab',
    description: 'Navigate a tab to a URL and wait for it to load.',
    inputSchema: obj(
      {
        tabId,
        url: { type: 'string', minLength: 1, description: 'URL to load in the tab' },
        waitUntil: { enum: ['load', 'domcontentloaded', 'none'], description: 'Default load' },
        timeoutMs: { type: 'integer', minimum: 0, maximum: 120000, description: 'Give up waiting after this many ms (default 30000)' },
      },
      ['tabId', 'url'],
    ),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_go_back',
    description: 'Go back one page in a tab\'s history and wait for it to load.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_go_forward',
    description: 'Go forward one page in a tab\'s history and wait for it to load.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_reload_tab',
    description: 'Reload a tab (optionally bypassing the cache) and wait for it to load.',
    inputSchema: obj({ tabId, bypassCache: { type: 'boolean', description: 'Reload without the cache (default false)' } }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_focus_tab',
    description: 'Make a tab active and focus its window.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_get_tab_info',
    description: 'Details of one tab: url, title, status, active, windowId, groupId, audible, favIconUrl.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_list_windows',
    description: 'List browser windows with their state, size and tabs.',
    inputSchema: obj({}),
    defaultPermission: 'auto',
    group: 'windows',
  },
  {
    name: 'browser_create_window',
    description: 'Open a new window, optionally at a URL, with a size or state.',
    inputSchema: obj({
      url: { type: 'string', minLength: 1, description: 'URL of the first tab (default a blank tab)' },
      width: { type: 'integer', minimum: 100, maximum: 10000, description: 'Window width in pixels' },
      height: { type: 'integer', minimum: 100, maximum: 10000, description: 'Window height in pixels' },
      state: { enum: ['normal', 'minimized', 'maximized', 'fullscreen'], description: 'Window state (default normal)' },
      incognito: { type: 'boolean', description: 'Open an incognito window (only if the extension is allowed in incognito)' },
    }),
    defaultPermission: 'auto',
    group: 'windows',
  },
  {
    name: 'browser_close_window',
    description: 'Close a window and all its tabs.',
    inputSchema: obj({ windowId: { type: 'integer', description: 'Window id from browser_list_windows' } }, ['windowId']),
    defaultPermission: 'auto',
    group: 'windows',
  },
  {
    name: 'browser_snapshot',
    description:
      'Compact outline of a page: role, accessible name, value/state and a ref per element (far smaller than HTML). Refs stay valid until the next navigation.',
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'Outline only this element' },
        maxDepth: { type: 'integer', minimum: 0, maximum: 200, description: 'Default 50' },
        interactiveOnly: { type: 'boolean', description: 'Only links, buttons, fields … (flat list)' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_get_tab_content',
    description: 'Visible text of a tab (or of the element matching selector), truncated at maxLength.',
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'CSS selector; default the whole page' },
        maxLength: { type: 'integer', minimum: 1, maximum: 1000000, description: 'Default 50000' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_get_page_html',
    description: 'HTML of a tab (or of the element matching selector), truncated at maxLength.',
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'CSS selector; default the whole document' },
        maxLength: { type: 'integer', minimum: 1, maximum: 5000000, description: 'Default 200000' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_query_elements',
    description: 'Elements matching a CSS selector: tag, text, chosen attributes, visibility and position.',
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'CSS selector (pierces open shadow roots)' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Default 100' },
        attributes: { type: 'array', items: { type: 'string' }, description: 'Attributes to return (default a useful set)' },
      },
      ['tabId', 'selector'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_wait_for_element',
    description: 'Wait until an element (CSS selector) or a text appears, becomes visible or goes away.',
    // selector or text: checked by the extension (see `target` above for why not in the schema)
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'CSS selector of the element to wait for (or give text)' },
        text: { type: 'string', minLength: 1, description: 'Text to wait for anywhere in the page (or give selector)' },
        state: { enum: ['visible', 'attached', 'hidden'], description: 'Default visible' },
        timeoutMs: { type: 'integer', minimum: 0, maximum: 25000, description: 'Default 10000' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_wait_for',
    description: 'Wait for one thing instead of sleeping: a text to appear (text) or to go away (textGone), the tab URL to match (urlPattern), or a time to pass (time).',
    inputSchema: obj(
      {
        tabId,
        text: { type: 'string', minLength: 1, description: 'Wait until this text is visible in the page' },
        textGone: { type: 'string', minLength: 1, description: 'Wait until this text is no longer visible' },
        urlPattern: { type: 'string', minLength: 1, description: 'Wait until the tab URL matches: a substring, or a pattern where * matches anything (https://app.example.com/done*)' },
        time: { type: 'integer', minimum: 0, maximum: 25000, description: 'Just wait this many milliseconds' },
        timeoutMs: { type: 'integer', minimum: 0, maximum: 25000, description: 'Give up after this many ms (default 10000)' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_get_styles',
    description: 'Computed CSS styles of one element (CSS selector or snapshot ref): every property, or the ones named.',
    inputSchema: target({ properties: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 200, description: 'Only these properties, e.g. ["color", "font-size"]' } }),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_accessibility_audit',
    description: 'Common accessibility problems of the page: images without alt text, fields without a label, buttons and links without a name, text below WCAG AA contrast; each with a selector and what is wrong.',
    inputSchema: obj({ tabId, limit: limit(500, 100) }, ['tabId']),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_screenshot_tab',
    description: 'Screenshot of a tab as an image: the visible part (brings the tab to the front), the full page, or one element (selector or snapshot ref).',
    inputSchema: obj(
      {
        tabId,
        fullPage: { type: 'boolean', description: 'The whole scrollable page, not just the viewport' },
        selector: { type: 'string', minLength: 1, description: 'Only this element (CSS selector)' },
        ref: { type: 'string', pattern: '^e[0-9]+$', description: 'Only this element (ref from browser_snapshot)' },
        format: { enum: ['png', 'jpeg'], description: 'Default png' },
        quality: { type: 'integer', minimum: 0, maximum: 100, description: 'JPEG quality' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'reading',
  },
  {
    name: 'browser_click_element',
    description: 'Click an element (CSS selector or snapshot ref) with a real, trusted mouse event.',
    inputSchema: target({
      button: { enum: ['left', 'right', 'middle'], description: 'Default left' },
      clickCount: { type: 'integer', minimum: 1, maximum: 3, description: '2 for a double click' },
      modifiers,
    }),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_type_text',
    description: 'Type text into a field (CSS selector or snapshot ref) as real input. Replaces what the field holds unless append is true; optionally presses Enter after.',
    inputSchema: target(
      {
        text: { type: 'string', description: 'The text to type' },
        append: { type: 'boolean', description: 'Add to what the field holds instead of replacing it (default false: the field ends up holding exactly `text`)' },
        clear: { type: 'boolean', description: 'Older name for the default: replace what the field holds (cannot be combined with append)' },
        submit: { type: 'boolean', description: 'Press Enter after typing' },
      },
      ['text'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_select_option',
    description: 'Choose an option of a <select> by value or visible label.',
    inputSchema: target({ value: { type: 'string', description: 'Option value' }, label: { type: 'string', description: 'Option text (when no value)' } }),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_press_key',
    description: 'Press a key (Enter, Tab, Escape, Backspace, arrows, one character …), optionally in an element first focused.',
    inputSchema: obj(
      {
        tabId,
        key: { type: 'string', minLength: 1, description: 'Key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown) or one character' },
        selector: { type: 'string', minLength: 1, description: 'Focus this element first (CSS selector); default the focused element' },
        ref: refSchema,
        modifiers,
      },
      ['tabId', 'key'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_scroll',
    description: 'Scroll an element into view (selector or ref), by a direction and distance, or to x,y.',
    inputSchema: obj(
      {
        tabId,
        selector: { type: 'string', minLength: 1, description: 'Scroll this element into view (CSS selector)' },
        ref: refSchema,
        direction: { enum: ['up', 'down', 'left', 'right'], description: 'Scroll the page (or the element) this way' },
        distance: { type: 'integer', minimum: 1, maximum: 100000, description: 'Pixels (default 600)' },
        x: { type: 'integer', minimum: 0, description: 'Scroll the page to this horizontal position (pixels)' },
        y: { type: 'integer', minimum: 0, description: 'Scroll the page to this vertical position (pixels)' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_hover_element',
    description: 'Move the mouse over an element (CSS selector or snapshot ref) with a real event.',
    inputSchema: target({}),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_handle_dialog',
    description:
      'Answer the JavaScript dialog (alert, confirm, prompt) open in a tab: accept or dismiss it, with the text for a prompt. A click or key press that opens a dialog returns at once with `dialog` in its result.',
    inputSchema: obj(
      {
        tabId,
        action: { enum: ['accept', 'dismiss'], description: 'accept (OK) or dismiss (Cancel); default accept' },
        promptText: { type: 'string', description: 'Text to answer a prompt() with (accept only)' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_fill_form',
    description:
      'Fill several fields of a form in one call: text fields and textareas (value replaced), checkboxes and radios (checked true/false), selects (option value or label). Each field by CSS selector or snapshot ref; the page gets input and change events as from a user. Reports each field, and stops at the first field it cannot fill.',
    inputSchema: obj(
      {
        tabId,
        fields: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          description: 'The fields to fill, in order',
          items: obj(
            {
              selector: { type: 'string', minLength: 1, description: 'CSS selector of the field (or give ref)' },
              ref: refSchema,
              value: { type: 'string', description: 'Text for a text field or textarea; option value or label for a select; radio: its value' },
              checked: { type: 'boolean', description: 'For a checkbox or radio: check (true) or uncheck (false)' },
            },
            [],
          ),
        },
      },
      ['tabId', 'fields'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_emulate',
    description:
      'Make a tab look like another device or place: viewport and device metrics, user agent, geolocation, timezone, locale, color scheme, reduced motion, network and CPU throttling. In effect until reset: true.',
    inputSchema: obj(
      {
        tabId,
        viewport: {
          description: 'Viewport size and device metrics',
          ...obj(
          {
            width: { type: 'integer', minimum: 100, maximum: 10000, description: 'CSS pixels' },
            height: { type: 'integer', minimum: 100, maximum: 10000, description: 'CSS pixels' },
            deviceScaleFactor: { type: 'number', minimum: 0, maximum: 10, description: 'Device pixel ratio (0: keep)' },
            mobile: { type: 'boolean', description: 'Emulate a mobile device (meta viewport, overlay scrollbars)' },
          },
          ['width', 'height'],
          ),
        },
        userAgent: { type: 'string', minLength: 1, description: 'User-Agent string' },
        geolocation: { description: 'Position navigator.geolocation reports', ...obj({ latitude: { type: 'number', minimum: -90, maximum: 90, description: 'Degrees' }, longitude: { type: 'number', minimum: -180, maximum: 180, description: 'Degrees' }, accuracy: { type: 'number', minimum: 0, description: 'Meters (default 50)' } }, ['latitude', 'longitude']) },
        timezone: { type: 'string', minLength: 1, description: 'IANA timezone, e.g. Asia/Tokyo' },
        locale: { type: 'string', minLength: 2, description: 'BCP 47 locale, e.g. fr-FR' },
        colorScheme: { enum: ['light', 'dark'], description: 'prefers-color-scheme' },
        reducedMotion: { enum: ['reduce', 'no-preference'], description: 'prefers-reduced-motion' },
        network: { enum: ['offline', 'slow-3g', 'fast-3g', 'none'], description: 'Network throttling preset (none: no throttling)' },
        cpuThrottling: { type: 'number', minimum: 1, maximum: 20, description: 'Slow the CPU down this many times (1: none)' },
        reset: { type: 'boolean', description: 'End every emulation of the tab' },
      },
      ['tabId'],
    ),
    defaultPermission: 'auto',
    group: 'acting',
  },
  {
    name: 'browser_execute_script',
    description: 'Run JavaScript in the page and return its result: an expression, a function (called), or a body with `return`; promises are awaited; DOM elements come back as {tag, id, text, selector} usable by the other tools. Off by default: it runs code with your session.',
    inputSchema: obj(
      {
        tabId,
        code: {
          type: 'string',
          minLength: 1,
          maxLength: 1000000,
          description: 'An expression (`document.title`), a function (`() => document.title`, called with no arguments) or a function body with `return` (`const a = 1; return a + 1`). Promises are awaited.',
        },
      },
      ['tabId', 'code'],
    ),
    defaultPermission: 'off',
    group: 'acting',
    risk: 'runs any code in the page',
  },
  {
    name: 'browser_get_storage',
    description: 'Read localStorage or sessionStorage of a tab (one key or all). Off by default: storage often holds tokens.',
    inputSchema: obj({ tabId, storageType: { enum: ['local', 'session'], description: 'Default local' }, key: { type: 'string', description: 'Only this key (default every key)' } }, ['tabId']),
    defaultPermission: 'off',
    group: 'storage',
    risk: 'reads page storage (may hold tokens)',
  },
  {
    name: 'browser_get_cookies',
    description: 'Cookies Chrome would send to a URL (optionally one name). Off by default: cookies are credentials.',
    inputSchema: obj({ url: { type: 'string', minLength: 1, description: 'Cookies that would be sent to this http(s) URL' }, name: { type: 'string', description: 'Only the cookie with this name' } }, ['url']),
    defaultPermission: 'off',
    group: 'storage',
    risk: 'reads cookies (session secrets)',
  },
  {
    name: 'browser_set_cookie',
    description: 'Set a cookie for a URL.',
    inputSchema: obj(
      {
        url: { type: 'string', minLength: 1, description: 'The http(s) URL the cookie belongs to' },
        name: { type: 'string', minLength: 1, description: 'Cookie name' },
        value: { type: 'string', description: 'Cookie value (default empty)' },
        domain: { type: 'string', description: 'Domain (default: a host-only cookie of the URL)' },
        path: { type: 'string', description: 'Path (default the URL path)' },
        secure: { type: 'boolean', description: 'Only over HTTPS' },
        httpOnly: { type: 'boolean', description: 'Hidden from page scripts' },
        sameSite: { enum: ['no_restriction', 'lax', 'strict', 'unspecified'], description: 'SameSite policy' },
        expirationDate: { type: 'number', description: 'Seconds since the epoch; omit for a session cookie' },
      },
      ['url', 'name'],
    ),
    defaultPermission: 'ask',
    group: 'storage',
    risk: 'changes cookies',
  },
  {
    name: 'browser_delete_cookies',
    description: 'Delete the cookie with this name for a URL.',
    inputSchema: obj({ url: { type: 'string', minLength: 1, description: 'The http(s) URL the cookie belongs to' }, name: { type: 'string', minLength: 1, description: 'Name of the cookie to delete' } }, ['url', 'name']),
    defaultPermission: 'ask',
    group: 'storage',
    risk: 'deletes cookies (can sign you out)',
  },
  {
    name: 'browser_get_console_logs',
    description:
      'Console messages of the page in a tab (console.* calls, uncaught exceptions, and browser messages such as failed loads), oldest first; objects and arrays shown as JSON. ' +
      'Read from what Chrome keeps for the current document, so messages logged before this call are included (up to about 1000 per page); ' +
      'they reset when the page navigates or reloads. Each entry: level, type (console method or source), text, url, line, timestamp.',
    inputSchema: obj({
      tabId,
      level: { enum: ['debug', 'info', 'warning', 'error'], description: 'Minimum level (default debug: everything)' },
      clear: { type: 'boolean', description: 'Clear the messages after reading them' },
      limit: { type: 'integer', minimum: 1, maximum: CONSOLE_LOGS_MAX_LIMIT, description: `Newest N entries (default ${CONSOLE_LOGS_DEFAULT_LIMIT})` },
    }, ['tabId']),
    defaultPermission: 'auto',
    group: 'console',
  },
  {
    name: 'browser_clear_console_logs',
    description: 'Clear the console messages Chrome keeps for the page in a tab (later browser_get_console_logs calls only see newer ones).',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'console',
  },
  {
    name: 'browser_enable_network_capture',
    description:
      'Start recording network requests (and WebSocket frames) of a tab through the debugger. Only requests made after this call are recorded; ' +
      'recording survives navigations and lasts until browser_disable_network_capture or the tab closes. Calling it again updates the settings and keeps what was recorded. ' +
      `Keeps the newest maxRequests requests; captured bodies are cut at ${CAPTURE_BODY_MAX_BYTES / 1024} KB (flagged truncated). Asks first: responses can hold private data.`,
    inputSchema: obj({
      tabId,
      urlFilter: { type: 'string', minLength: 1, description: 'Record only requests whose URL contains this text (* matches any run of characters); WebSocket frames are kept regardless' },
      maxRequests: { type: 'integer', minimum: 1, maximum: NETWORK_CAPTURE_MAX_REQUESTS, description: `Default ${NETWORK_CAPTURE_DEFAULT_REQUESTS}` },
      captureBodies: { type: 'boolean', description: 'Also keep request and response bodies (default false)' },
    }, ['tabId']),
    defaultPermission: 'ask',
    group: 'network',
    risk: 'records network traffic, bodies included',
  },
  {
    name: 'browser_get_network_requests',
    description:
      'Requests recorded since browser_enable_network_capture, oldest first: method, url, status, type, timing, request/response headers, and bodies when captured and includeBodies is set.',
    inputSchema: obj({
      tabId,
      urlFilter: { type: 'string', minLength: 1, description: 'Only URLs containing this text (* matches any run of characters)' },
      includeBodies: { type: 'boolean', description: 'Include captured bodies (default false)' },
      clear: { type: 'boolean', description: 'Forget the returned requests after reading them' },
    }, ['tabId']),
    defaultPermission: 'auto',
    group: 'network',
    risk: 'reads recorded traffic (may hold private data)',
  },
  {
    name: 'browser_get_network_request',
    description: 'One recorded request in full: method, URL, status, headers both ways, timing, and its request and response bodies when captureBodies was on.',
    inputSchema: obj({ tabId, requestId: { type: 'string', minLength: 1, description: 'requestId from browser_get_network_requests' } }, ['tabId', 'requestId']),
    defaultPermission: 'auto',
    group: 'network',
  },
  {
    name: 'browser_intercept_requests',
    description:
      "Block, fail or answer (mock) a tab's requests by URL pattern until stop: true; each rule reports how often it matched. Calling it again replaces the rules; no rules lists them. Asks first: a mocked answer changes what the page shows.",
    inputSchema: obj(
      {
        tabId,
        rules: {
          type: 'array',
          maxItems: 50,
          description: 'Rules, first match wins',
          items: obj(
            {
              urlPattern: { type: 'string', minLength: 1, description: 'URL pattern: * matches anything, ? one character (e.g. *://*/api/ads*)' },
              action: { enum: ['block', 'fail', 'fulfill'], description: 'block (as an ad blocker would), fail (network error), fulfill (answer with status and body)' },
              status: { type: 'integer', minimum: 100, maximum: 599, description: 'fulfill: HTTP status (default 200)' },
              body: { type: 'string', maxLength: 1000000, description: 'fulfill: response body' },
              contentType: { type: 'string', description: 'fulfill: Content-Type (default application/json)' },
            },
            ['urlPattern', 'action'],
          ),
        },
        stop: { type: 'boolean', description: 'Stop intercepting (every rule ends)' },
      },
      ['tabId'],
    ),
    defaultPermission: 'ask',
    group: 'network',
    risk: 'changes what the page receives',
  },
  {
    name: 'browser_get_websocket_frames',
    description: `WebSocket frames sent and received by the page since browser_enable_network_capture (newest ${WEBSOCKET_FRAMES_MAX} kept), oldest first.`,
    inputSchema: obj({ tabId, clear: { type: 'boolean', description: 'Forget the returned frames after reading them' } }, ['tabId']),
    defaultPermission: 'auto',
    group: 'network',
    risk: 'reads recorded WebSocket messages',
  },
  {
    name: 'browser_export_har',
    description: 'The recorded requests of a tab as a HAR 1.2 document (bodies included when they were captured).',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'network',
    risk: 'exports recorded traffic (may hold private data)',
  },
  {
    name: 'browser_disable_network_capture',
    description: 'Stop recording network traffic of a tab, forget what was recorded and release the debugger.',
    inputSchema: obj({ tabId }, ['tabId']),
    defaultPermission: 'auto',
    group: 'network',
  },
  {
    name: 'browser_list_tab_groups',
    description: 'Tab groups of every window: id, title, color, collapsed, window and the tab ids in each.',
    inputSchema: obj({}),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_group_tabs',
    description: 'Put tabs in a new tab group (optionally titled and colored) or add them to an existing one (groupId).',
    inputSchema: obj({ tabIds, groupId: { type: 'integer', minimum: 0, description: 'Add to this group (from browser_list_tab_groups) instead of a new one' }, title: { type: 'string', description: 'Title of the group' }, color: groupColor }, ['tabIds']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_update_tab_group',
    description: "Change a tab group's title, color or collapsed state.",
    inputSchema: obj({ groupId: { type: 'integer', minimum: 0, description: 'Group id from browser_list_tab_groups' }, title: { type: 'string', description: 'New title' }, color: groupColor, collapsed: { type: 'boolean', description: 'Collapse (true) or expand (false)' } }, ['groupId']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_ungroup_tabs',
    description: 'Take tabs out of their tab groups.',
    inputSchema: obj({ tabIds }, ['tabIds']),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_list_recently_closed',
    description: 'Recently closed tabs and windows, newest first, with the sessionId browser_restore_closed takes.',
    inputSchema: obj({ limit: limit(25, 10) }),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_restore_closed',
    description: 'Reopen a recently closed tab or window (by sessionId; default the most recent).',
    inputSchema: obj({ sessionId: { type: 'string', minLength: 1, description: 'From browser_list_recently_closed' } }),
    defaultPermission: 'auto',
    group: 'tabs',
  },
  {
    name: 'browser_update_window',
    description: "Move, resize, maximize, minimize, restore or focus a window.",
    inputSchema: obj(
      {
        windowId: { type: 'integer', description: 'Window id from browser_list_windows' },
        state: { enum: ['normal', 'minimized', 'maximized', 'fullscreen'], description: 'Window state (a position or size needs normal)' },
        left: { type: 'integer', description: 'Distance from the left edge of the screen, pixels' },
        top: { type: 'integer', description: 'Distance from the top edge of the screen, pixels' },
        width: { type: 'integer', minimum: 100, maximum: 10000, description: 'Width in pixels' },
        height: { type: 'integer', minimum: 100, maximum: 10000, description: 'Height in pixels' },
        focused: { type: 'boolean', description: 'Bring the window to the front' },
      },
      ['windowId'],
    ),
    defaultPermission: 'auto',
    group: 'windows',
  },
  {
    name: 'browser_search_history',
    description: "Search the browser's history (URL and title) over the last days. Asks first: history shows what you did.",
    inputSchema: obj({ query: { type: 'string', description: 'Words to find in URLs and titles (empty: everything)' }, days: { type: 'integer', minimum: 1, maximum: 365, description: 'How far back (default 7)' }, limit: limit(100, 20) }),
    defaultPermission: 'ask',
    group: 'data',
    risk: 'reads your browsing history',
  },
  {
    name: 'browser_search_bookmarks',
    description: 'Find bookmarks whose title or URL matches. Asks first.',
    inputSchema: obj({ query: { type: 'string', minLength: 1, description: 'Words to find in bookmark titles and URLs' }, limit: limit(100, 20) }, ['query']),
    defaultPermission: 'ask',
    group: 'data',
    risk: 'reads your bookmarks',
  },
  {
    name: 'browser_clear_site_data',
    description: "Clear one site's data: cookies (signs you out there), local storage, IndexedDB, Cache Storage, service workers — all, or the kinds named. Asks first.",
    inputSchema: obj(
      {
        origin: { type: 'string', minLength: 1, description: 'The site, e.g. https://app.example.com' },
        kinds: { type: 'array', items: { enum: ['cookies', 'localStorage', 'indexedDB', 'cacheStorage', 'serviceWorkers'] }, minItems: 1, uniqueItems: true, description: 'Only these kinds (default all)' },
      },
      ['origin'],
    ),
    defaultPermission: 'ask',
    group: 'data',
    risk: "deletes a site's data (signs you out)",
  },
  {
    name: 'browser_download',
    description: "Download a URL into the browser's download folder (optionally under a file name). Asks first: it writes a file.",
    inputSchema: obj({ url: { type: 'string', minLength: 1, description: 'The http(s) URL to download' }, filename: { type: 'string', minLength: 1, description: 'File name inside the download folder (no ..)' } }, ['url']),
    defaultPermission: 'ask',
    group: 'data',
    risk: 'writes a file on your computer',
  },
  {
    name: 'browser_list_downloads',
    description: 'Recent downloads, newest first: URL, file, state (in_progress, complete, interrupted) and bytes; or one by downloadId.',
    inputSchema: obj({ downloadId: { type: 'integer', minimum: 0, description: 'Only this download (from browser_download)' }, limit: limit(100, 20) }),
    defaultPermission: 'auto',
    group: 'data',
  },
  {
    name: 'plugin_draft_from_capture',
    description:
      "Draft a plugin for a web app from a tab's recorded traffic (capture on with captureBodies, then the app used for a while): one tool per API operation, written to the OpenTabs config folder's drafts/ for the user to review and add. Asks first.",
    inputSchema: obj(
      {
        tabId,
        name: { type: 'string', pattern: '^[a-z][a-z0-9]*(-[a-z0-9]+)*$', maxLength: 40, description: 'Plugin name: lowercase words joined by "-" (e.g. "kanban")' },
      },
      ['tabId', 'name'],
    ),
    defaultPermission: 'ask',
    group: 'extension',
    servedBy: 'server',
    risk: 'writes a plugin draft into the config folder',
  },
  {
    name: 'extension_get_state',
    description: 'Extension state: connection, version, plugins with their tabs and adapter state.',
    inputSchema: obj({}),
    defaultPermission: 'auto',
    group: 'extension',
  },
  {
    name: 'extension_get_logs',
    description: 'The extension\'s own log (connection changes, injection failures), newest last.',
    inputSchema: obj({
      level: { enum: ['debug', 'info', 'warning', 'error'], description: 'Minimum level (default debug)' },
      limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Default 100' },
    }),
    defaultPermission: 'auto',
    group: 'extension',
  },
  {
    name: 'extension_check_adapter',
    description: 'Check a plugin\'s adapter in each matching tab: injected, current hash, isReady(), bridge connected.',
    inputSchema: obj({ plugin: { type: 'string', minLength: 1, description: 'Plugin name (see extension_get_state)' } }, ['plugin']),
    defaultPermission: 'auto',
    group: 'extension',
  },
  {
    name: 'extension_reload',
    description: 'Reload the extension (it reconnects by itself within seconds).',
    inputSchema: obj({}),
    defaultPermission: 'auto',
    group: 'extension',
  },
  {
    name: 'plugin_list_tabs',
    description: 'Tabs matching each plugin (or one plugin) with their state (closed / unavailable / ready), as the extension last reported.',
    inputSchema: obj({ plugin: { type: 'string', minLength: 1, description: 'Only this plugin' } }),
    defaultPermission: 'auto',
    group: 'extension',
    servedBy: 'server',
  },
];

export const BROWSER_TOOL_NAMES = BROWSER_TOOLS.map((t) => t.name);
export const BROWSER_PLUGIN = 'browser';

/** Tools that change nothing: they read tabs, pages, recordings or browser data. */
const READ_ONLY = /^(browser|extension|plugin)_(list|get|query|wait|search|export|snapshot|screenshot|accessibility|check)/;
/**
 * Tools that may delete or overwrite: closing, deleting, clearing, setting, running code,
 * reloading, downloading, and acting on a page's content (a click or a submitted form can delete
 * things in the web app).
 */
const DESTRUCTIVE = /^(?:browser|extension)_(close|delete|clear|set|execute|reload|download|ungroup|click|type|press|select|fill|handle)(_|$)/;

/**
 * MCP annotations of a built-in, from its name: read-only for the readers; for the others,
 * destructiveHint false unless it may delete or overwrite something. The title is the name's words.
 */
export function builtinAnnotations(def: Pick<BrowserToolDef, 'name'>): ToolAnnotations {
  if (READ_ONLY.test(def.name) && !DESTRUCTIVE.test(def.name)) return { readOnlyHint: true };
  return DESTRUCTIVE.test(def.name) ? { destructiveHint: true } : { destructiveHint: false };
}
