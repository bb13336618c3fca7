/**
 * Which DevTools network events a capture keeps: only requests made while the tab shows the site
 * capture was started on. A main-frame request is judged by its own document (documentURL), so the
 * navigation that leaves the site and every hop of a redirect chain through another site are left
 * out while the one coming back is kept; other requests (frames, workers, sockets) by the top-level
 * page last committed. Left-out requests are only counted.
 */
import { describe, expect, test } from 'bun:test';
import { onNetworkEvent } from '../../extension/tools/network-capture.ts';
import type { Capture } from '../../extension/tools/network-records.ts';

const A = 'https://a.example';
const B = 'https://b.example';

function capture(topSite = A): Capture {
  return {
    tabId: 1,
    site: A,
    topSite,
    mainFrameId: 'MAIN',
    skippedAway: 0,
    urlFilter: null,
    maxRequests: 100,
    captureBodies: false,
    since: 0,
    requests: new Map(),
    dropped: 0,
    redirects: 0,
    sockets: new Map(),
    frames: [],
    framesDropped: 0,
    frameChars: 0,
    clockOffset: null,
    pendingBodies: new Set(),
    bodyChars: 0,
    send: (async () => ({})) as Capture['send'],
    stop: () => {},
    released: Promise.resolve(),
  };
}

let n = 0;
function request(c: Capture, url: string, more: { frameId?: string; documentURL?: string; type?: string; requestId?: string; redirectResponse?: unknown } = {}): string {
  const requestId = more.requestId ?? `r${++n}`;
  onNetworkEvent(c, 'Network.requestWillBeSent', {
    requestId,
    request: { url, method: 'GET', headers: {} },
    timestamp: 1,
    wallTime: 1,
    type: more.type ?? 'Fetch',
    ...(more.frameId !== undefined ? { frameId: more.frameId } : {}),
    ...(more.documentURL !== undefined ? { documentURL: more.documentURL } : {}),
    ...(more.redirectResponse !== undefined ? { redirectResponse: more.redirectResponse } : {}),
  });
  return requestId;
}

const urls = (c: Capture) => [...c.requests.values()].map((r) => r.url);

describe('capture pauses while the tab is away from its site', () => {
  test('main-frame requests are judged by their own document', () => {
    const c = capture();
    request(c, `${A}/api/1`, { frameId: 'MAIN', documentURL: `${A}/` });
    // Leaving: the navigation to B and what B's page asks for.
    request(c, `${B}/?secret=1`, { frameId: 'MAIN', documentURL: `${B}/?secret=1`, type: 'Document' });
    request(c, `${B}/api/secret`, { frameId: 'MAIN', documentURL: `${B}/?secret=1` });
    // Coming back (the top-level page as last seen may still be B: the request decides).
    c.topSite = B;
    request(c, `${A}/back`, { frameId: 'MAIN', documentURL: `${A}/back`, type: 'Document' });
    expect(urls(c)).toEqual([`${A}/api/1`, `${A}/back`]);
    expect(c.skippedAway).toBe(2);
  });

  test('frames, workers and sockets follow the top-level page', () => {
    const c = capture(B);
    request(c, `${A}/framed`, { frameId: 'SUB', documentURL: `${A}/framed`, type: 'Document' });
    request(c, `${B}/worker-fetch`);
    onNetworkEvent(c, 'Network.webSocketCreated', { requestId: 'ws1', url: 'wss://b.example/live' });
    onNetworkEvent(c, 'Network.webSocketFrameReceived', { requestId: 'ws1', timestamp: 1, response: { opcode: 1, payloadData: 'secret' } });
    expect(urls(c)).toEqual([]);
    expect(c.frames).toEqual([]);
    expect(c.skippedAway).toBe(3);
    c.topSite = A;
    request(c, `${B}/embedded-in-a`, { frameId: 'SUB', documentURL: `${B}/widget` });
    onNetworkEvent(c, 'Network.webSocketCreated', { requestId: 'ws2', url: 'wss://a.example/live' });
    onNetworkEvent(c, 'Network.webSocketFrameReceived', { requestId: 'ws2', timestamp: 1, response: { opcode: 1, payloadData: 'hello' } });
    expect(urls(c)).toEqual([`${B}/embedded-in-a`]);
    expect(c.frames.map((f) => f.payload)).toEqual(['hello']);
  });

  test('a sign-in redirect chain through another site keeps only the hops on the site', () => {
    const c = capture();
    const id = request(c, `${A}/login`, { frameId: 'MAIN', documentURL: `${A}/login`, type: 'Document', requestId: 'nav' });
    const hop = (url: string, from: string) =>
      request(c, url, { frameId: 'MAIN', documentURL: url, type: 'Document', requestId: id, redirectResponse: { url: from, status: 302, statusText: 'Found', headers: {}, mimeType: '' } });
    hop(`${B}/sso?client=a`, `${A}/login`);
    hop(`${A}/callback?code=1`, `${B}/sso?client=a`);
    expect(urls(c).sort()).toEqual([`${A}/callback?code=1`, `${A}/login`]);
    expect(c.skippedAway).toBe(1);
  });
});
