/** Built-in tools for a tab's network: recording, reading, HAR export, interception. Declared once here (declare.ts). */
import * as v from 'valibot';
import { tabId } from './common.ts';
import { tool } from './declare.ts';

export const networkTools = [
  tool({
    name: 'browser_enable_network_capture',
    group: 'network',
    description: 'Record a tab\'s network requests and WebSocket frames from now on, until browser_disable_network_capture, while the tab shows the site it was started on (requests elsewhere are only counted). Calling it again updates the settings and keeps the records. Bodies are cut at 100 KB (flagged truncated); an answer from another origin keeps its body only when CORS lets the page read it.',
    input: v.strictObject({
      tabId,
      urlFilter: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Only URLs containing this text (* matches any run of characters); WebSocket frames are always kept'))),
      maxRequests: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2000), v.description('Default 200'))),
      captureBodies: v.optional(v.pipe(v.boolean(), v.description('Also keep request and response bodies'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: false },
    risk: 'records network traffic, bodies included',
  }),
  tool({
    name: 'browser_get_network_requests',
    group: 'network',
    description: 'Requests recorded since browser_enable_network_capture, oldest first: method, url, status, type, timing, request/response headers, and bodies when captured and includeBodies is set.',
    input: v.strictObject({
      tabId,
      urlFilter: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Only URLs containing this text (* matches any run of characters)'))),
      includeBodies: v.optional(v.pipe(v.boolean(), v.description('Include captured bodies'))),
      clear: v.optional(v.pipe(v.boolean(), v.description('Forget the returned requests after reading them'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
    risk: 'reads recorded traffic (may hold private data)',
  }),
  tool({
    name: 'browser_get_network_request',
    group: 'network',
    description: 'One recorded request in full: method, URL, status, headers both ways, timing, and its request and response bodies when captureBodies was on.',
    input: v.strictObject({
      tabId,
      requestId: v.pipe(v.string(), v.minLength(1), v.description('requestId from browser_get_network_requests')),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
  }),
  tool({
    name: 'browser_intercept_requests',
    group: 'network',
    description: 'Block, fail or answer (mock) a tab\'s http(s) requests by URL pattern until stop: true; each rule reports how often it matched. Calling it again replaces the rules; no rules lists them.',
    input: v.strictObject({
      tabId,
      rules: v.optional(v.pipe(v.array(v.strictObject({
        urlPattern: v.pipe(v.string(), v.minLength(1), v.description('URL pattern of http(s) requests: * matches anything, ? one character (e.g. *://*/api/ads*); one naming another scheme (chrome-extension:, file:, data:, blob:) is refused')),
        action: v.pipe(v.picklist(['block', 'fail', 'fulfill']), v.description('block (as an ad blocker would), fail (network error), fulfill (answer with status and body; data requests only: documents and scripts go on untouched, counted as skipped)')),
        status: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599), v.description('fulfill: HTTP status (default 200)'))),
        body: v.optional(v.pipe(v.string(), v.maxLength(1000000), v.description('fulfill: response body'))),
        contentType: v.optional(v.pipe(v.string(), v.description('fulfill: Content-Type (default application/json)'))),
      })), v.maxLength(50), v.description('Rules, first match wins'))),
      stop: v.optional(v.pipe(v.boolean(), v.description('Stop intercepting (every rule ends)'))),
    }),
    defaultPermission: 'ask',
    annotations: { destructiveHint: false },
    risk: 'changes what the page receives',
  }),
  tool({
    name: 'browser_get_websocket_frames',
    group: 'network',
    description: 'WebSocket frames sent and received by the page since browser_enable_network_capture (the newest 500 and at most 4 MB of payload kept; `dropped` counts the rest), oldest first.',
    input: v.strictObject({
      tabId,
      clear: v.optional(v.pipe(v.boolean(), v.description('Forget the returned frames after reading them'))),
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
    risk: 'reads recorded WebSocket messages',
  }),
  tool({
    name: 'browser_export_har',
    group: 'network',
    description: 'The recorded requests of a tab as a HAR 1.2 document (bodies included when they were captured).',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { readOnlyHint: true },
    risk: 'exports recorded traffic (may hold private data)',
  }),
  tool({
    name: 'browser_disable_network_capture',
    group: 'network',
    description: 'Stop recording network traffic of a tab, forget what was recorded and release the debugger.',
    input: v.strictObject({
      tabId,
    }),
    defaultPermission: 'auto',
    annotations: { destructiveHint: false, idempotentHint: true },
  }),
] as const;
