/**
 * Pointer input by coordinates, drag and drop, file upload, PDF printing, forced CSS pseudo
 * states and a performance summary: tools that drive or read a page through the DevTools protocol
 * (extension/tools/pointer.ts, upload.ts, pdf.ts, pseudo-state.ts, perf-trace.ts).
 */
import * as v from 'valibot';
import { clickCount, modifiers, mouseButton, ref, selector, tabId } from './common.ts';
import { tool } from './declare.ts';
import { UPLOAD_STAGING_MAX_BYTES } from '../limits.ts';

const x = v.pipe(v.number(), v.minValue(0), v.maxValue(100000), v.description('Viewport CSS pixels from the left edge'));
const y = v.pipe(v.number(), v.minValue(0), v.maxValue(100000), v.description('Viewport CSS pixels from the top edge'));

export const PSEUDO_STATES = ['hover', 'focus', 'active', 'visited', 'focus-within', 'focus-visible'] as const;

export const inputPageTools = [
  tool({
    name: 'browser_click_at',
    group: 'acting',
    description: 'Click at a point of the viewport (CSS pixels) with a real, trusted mouse event, e.g. on a canvas or map; returns the element hit.',
    input: v.strictObject({
      tabId,
      x,
      y,
      button: v.optional(mouseButton),
      clickCount: v.optional(clickCount),
      modifiers: v.optional(modifiers),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true },
  }),
  tool({
    name: 'browser_move_mouse',
    group: 'acting',
    description: 'Move the mouse to a point of the viewport (CSS pixels) with a real event, for hover menus and canvas apps.',
    input: v.strictObject({
      tabId,
      x,
      y,
      steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Intermediate moves from the last mouse position (default 1: jump there)'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false },
  }),
  tool({
    name: 'browser_drag',
    group: 'acting',
    description: 'Drag one element onto another (both in the top page or both in one iframe) with a real mouse press, moves and release: works for HTML5 drag and drop (draggable) and pointer-event drags.',
    input: v.strictObject({
      tabId,
      sourceSelector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('CSS selector of the element to drag (or give sourceRef)'))),
      sourceRef: v.optional(v.pipe(v.string(), v.regex(/^(f[0-9]+)?e[0-9]+$/), v.description('Ref (browser_snapshot; fNeN: in an iframe) of the element to drag'))),
      targetSelector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('CSS selector of the element to drop on (or give targetRef)'))),
      targetRef: v.optional(v.pipe(v.string(), v.regex(/^(f[0-9]+)?e[0-9]+$/), v.description('Ref (browser_snapshot; fNeN: in an iframe) of the element to drop on'))),
      steps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Mouse moves between press and release (default 10)'))),
      holdMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(5000), v.description('Hold still this many ms after the press (default 0), for libraries that start a drag only after a held press'))),
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: true },
  }),
  tool({
    name: 'browser_upload_file',
    group: 'acting',
    description: `Put local files into an <input type=file> of the top page, not an iframe (CSS selector or snapshot ref), or into the file chooser a button opens when clicked, as if chosen in the file dialog. The page gets copies the server makes of the files as checked (same names), up to ${UPLOAD_STAGING_MAX_BYTES / (1024 * 1024)} MB in all per call.`,
    input: v.strictObject({
      tabId,
      selector: v.optional(selector),
      ref: v.optional(ref),
      paths: v.pipe(
        v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))),
        v.minLength(1),
        v.maxLength(100),
        v.description('Absolute paths of files in a folder the user allowed for uploads; several only for an input with `multiple`'),
      ),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: true },
    risk: 'gives the page files from your disk',
  }),
  tool({
    name: 'browser_print_pdf',
    group: 'reading',
    description: 'Print a tab to PDF (as Chrome prints it) and return the PDF as an embedded resource.',
    input: v.strictObject({
      tabId,
      landscape: v.optional(v.pipe(v.boolean(), v.description('Landscape paper (default portrait)'))),
      printBackground: v.optional(v.pipe(v.boolean(), v.description('Print background colours and images'))),
      scale: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(2), v.description('Zoom of the page on paper (default 1)'))),
      pageRanges: v.optional(v.pipe(v.string(), v.regex(/^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/), v.description("Pages to print, e.g. '1-5, 8' (default all)"))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_force_pseudo_state',
    group: 'reading',
    description: 'Make an element (CSS selector or snapshot ref; not in another site\'s iframe) match :hover, :focus, :active … as DevTools does, to inspect or screenshot those styles; an empty list clears it.',
    input: v.strictObject({
      tabId,
      selector: v.optional(selector),
      ref: v.optional(ref),
      states: v.pipe(v.array(v.picklist(PSEUDO_STATES)), v.maxLength(PSEUDO_STATES.length), v.description('Pseudo-classes to force: hover, focus, active, visited, focus-within, focus-visible ([] clears)')),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_performance_trace',
    group: 'reading',
    description: "Measure a tab's performance: 'start' begins, 'stop' returns a summary (TTFB, DOMContentLoaded, load, LCP, CLS, long tasks and total blocking time).",
    input: v.strictObject({
      tabId,
      action: v.pipe(v.picklist(['start', 'stop']), v.description("After 'start', reload or act on the page, then 'stop'")),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
] as const;
