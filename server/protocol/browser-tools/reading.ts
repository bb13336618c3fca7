/** Built-in tools that read a page: snapshot, text, HTML, elements, waits, styles, screenshots. Declared once here (declare.ts). */
import * as v from 'valibot';
import { ref, selector, tabId } from './common.ts';
import { tool } from './declare.ts';

export const readingTools = [
  tool({
    name: 'browser_snapshot',
    group: 'reading',
    description: 'The page as compact Markdown-like text (all visible text; # headings, - lists, tab-separated table rows, landmark lines such as "nav Main:"). What can be acted on carries a ref: links as [text](e12), other controls as `button Save [e13]`, `textbox Email = "a@b.c" [e14]` (its value), `[x] Remember me [e15]` ([-] mixed; radios (x)/( )); pass it as ref to the other tools. Later table rows omit what the first said in that column (aria-label, or its words the row shows; role word: `[ ] [e30]`, `Open [e31]`); a control right after one with the same role word leaves it out (`button Bold [e9] Italic [e10]`; not fields); an aria-label after shown text (`👍 3 (3 liked)`) is said once per text. States follow the name: (disabled), (inert: e.g. behind a modal), (read-only), (invalid), (expanded)/(collapsed) (a combobox only (expanded)), (selected), (pressed), (current). An iframe\'s content is indented under its `iframe Name (url):` line, refs such as f3e2. Refs stay valid until the next navigation. Cut at 100,000 characters and 400 nested elements, with a mark (then pass selector).',
    input: v.strictObject({
      tabId,
      selector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Outline only this element'))),
      maxDepth: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(200), v.description('Default 50'))),
      interactiveOnly: v.optional(v.pipe(v.boolean(), v.description('Only links, buttons, fields … (flat list)'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_get_tab_content',
    group: 'reading',
    description: 'Visible text of a tab (or of the element matching selector), truncated at maxLength. For the whole page, the text of each iframe is where the iframe is, under an `[iframe Name (url)]` line (an iframe tools may not read is named, not read); with a selector, iframes in it are only counted.',
    input: v.strictObject({
      tabId,
      selector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('CSS selector; default the whole page'))),
      maxLength: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000000), v.description('Default 50000'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_get_page_html',
    group: 'reading',
    description: 'HTML of a tab (or of the element matching selector), truncated at maxLength. The content of iframes is not included (the result says when there are any; browser_snapshot shows it).',
    input: v.strictObject({
      tabId,
      selector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('CSS selector; default the whole document'))),
      maxLength: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5000000), v.description('Default 200000'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_query_elements',
    group: 'reading',
    description: 'Elements matching a CSS selector: tag, text, chosen attributes, visibility and position. Searches the top document (and open shadow roots), not iframes (the result says when there are any; browser_snapshot shows their content).',
    input: v.strictObject({
      tabId,
      selector,
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000), v.description('Default 100'))),
      attributes: v.optional(v.pipe(v.array(v.string()), v.description('Attributes to return (default a useful set)'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_wait_for_element',
    group: 'reading',
    description: 'Wait until an element (CSS selector) or a text appears, becomes visible or goes away. A text is looked for in the page\'s iframes too; a selector only in the top document.',
    input: v.strictObject({
      tabId,
      selector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('CSS selector of the element to wait for (or give text)'))),
      text: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Text to wait for anywhere in the page, iframes included (or give selector)'))),
      state: v.optional(v.pipe(v.picklist(['visible', 'attached', 'hidden']), v.description('Default visible'))),
      timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(25000), v.description('Default 10000'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_wait_for',
    group: 'reading',
    description: 'Wait for one thing instead of sleeping: give one of text, textGone, urlPattern, time.',
    input: v.strictObject({
      tabId,
      text: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Wait until this text is visible in the page or one of its iframes'))),
      textGone: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Wait until this text is no longer visible in the page nor its iframes'))),
      urlPattern: v.optional(v.pipe(v.string(), v.minLength(1), v.description('A substring of the URL, or a pattern where * matches anything (https://app.example.com/done*)'))),
      time: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(25000), v.description('Just wait this many milliseconds'))),
      timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(25000), v.description('Give up after this many ms (default 10000)'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_get_styles',
    group: 'reading',
    description: 'Computed CSS styles of one element: every property, or the ones named.',
    input: v.strictObject({
      tabId,
      selector: v.optional(selector),
      ref: v.optional(ref),
      properties: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.maxLength(200), v.description('Only these properties, e.g. ["color", "font-size"]'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_accessibility_audit',
    group: 'reading',
    description: 'Common accessibility problems of the page: images without alt text, fields without a label, buttons and links without a name, text below WCAG AA contrast; each with a selector and what is wrong.',
    input: v.strictObject({
      tabId,
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(500), v.description('Default 100'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_screenshot_tab',
    group: 'reading',
    description: 'Screenshot of a tab as an image: its viewport, the full page, or one element (selector or snapshot ref). A background tab is shot where it is, not brought to the front.',
    input: v.strictObject({
      tabId,
      fullPage: v.optional(v.pipe(v.boolean(), v.description('The whole scrollable page, not just the viewport'))),
      selector: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Only this element (CSS selector)'))),
      ref: v.optional(v.pipe(v.string(), v.regex(/^(f[0-9]+)?e[0-9]+$/), v.description('Only this element (ref from browser_snapshot; fNeN: inside an iframe)'))),
      format: v.optional(v.pipe(v.picklist(['png', 'jpeg']), v.description('Default png'))),
      quality: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100), v.description('JPEG quality'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
] as const;
