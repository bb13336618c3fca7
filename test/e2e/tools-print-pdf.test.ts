/**
 * browser_print_pdf in Chromium with the real extension: an MCP client gets the PDF as an embedded
 * resource (application/pdf, base64 bytes starting %PDF-), REST gets it under `resources`,
 * pageRanges past the end is a clear argument error, and a PDF over PDF_MAX_BYTES is refused
 * naming pageRanges.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { connectMcp } from '../harness/fake-extension.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
let mcp: Client;

type Content = { type: string; text?: string; resource?: { uri: string; mimeType?: string; blob?: string } };

beforeAll(async () => {
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/bench-article.html'));
  tabId = await h.tabIdOf(page);
  mcp = await connectMcp(h.url, h.srv.secret);
}, 60_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await h?.stop();
});

test('MCP: the PDF comes as an embedded resource whose bytes are a PDF', async () => {
  const r = (await mcp.callTool({ name: 'browser_print_pdf', arguments: { tabId, printBackground: true } })) as { isError?: boolean; content: Content[]; structuredContent?: any };
  expect(r.isError).toBeFalsy();
  const res = r.content.find((c) => c.type === 'resource');
  expect(res).toBeDefined();
  expect(res!.resource).toMatchObject({ mimeType: 'application/pdf', uri: `opentabs://tabs/${tabId}/print.pdf` });
  const bytes = Buffer.from(res!.resource!.blob!, 'base64');
  expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(r.structuredContent).toMatchObject({ mimeType: 'application/pdf', bytes: bytes.length });
  expect(r.structuredContent.pages).toBeGreaterThanOrEqual(2);
  // The text part describes the file; the bytes are only in the resource.
  expect(r.content[0].type).toBe('text');
  expect(r.content[0].text!.length).toBeLessThan(1000);
}, 60_000);

test('REST: resources in the JSON; landscape and pageRanges change the document', async () => {
  const all = await h.callTool('browser_print_pdf', { tabId });
  expect(all.status).toBe(200);
  const one = await h.callTool('browser_print_pdf', { tabId, pageRanges: '1', landscape: true, scale: 0.5 });
  expect(one.status).toBe(200);
  expect(one.body.resources).toHaveLength(1);
  const pdf = Buffer.from(one.body.resources[0].blob, 'base64').toString('latin1');
  expect(pdf.startsWith('%PDF-')).toBe(true);
  expect(one.body.result.pages).toBe(1);
  expect(all.body.result.pages).toBeGreaterThan(1);
  // Landscape: the page box is wider than tall (MediaBox [0 0 w h]).
  const box = /\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)/.exec(pdf);
  expect(box).not.toBeNull();
  expect(Number(box![1])).toBeGreaterThan(Number(box![2]));
}, 60_000);

test('pageRanges past the last page is an argument error', async () => {
  const r = await h.callTool('browser_print_pdf', { tabId, pageRanges: '900-901' });
  expect(r.status).toBe(400);
  expect(r.body.error.message).toContain('pageRanges');
}, 30_000);

test('a PDF over the size limit is refused with a hint to use pageRanges', async () => {
  // Pages of incompressible pixels: far more than PDF_MAX_BYTES of image data.
  await page.evaluate(() => {
    for (let k = 0; k < 4; k++) {
      const c = document.createElement('canvas');
      c.width = 1400;
      c.height = 1400;
      c.className = 'noise';
      c.style.cssText = 'display:block;width:700px;height:700px;break-before:page';
      const ctx = c.getContext('2d')!;
      const img = ctx.createImageData(c.width, c.height);
      for (let i = 0; i < img.data.length; i++) img.data[i] = (Math.random() * 256) | 0;
      ctx.putImageData(img, 0, 0);
      document.body.appendChild(c);
    }
  });
  try {
    const r = await h.callTool('browser_print_pdf', { tabId });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('result_too_large');
    expect(r.body.error.message).toContain('pageRanges');
    expect(r.body.error.message).toMatch(/over the 6\.0 MB limit/);
  } finally {
    await page.evaluate(() => document.querySelectorAll('canvas.noise').forEach((c) => c.remove()));
  }
}, 60_000);
