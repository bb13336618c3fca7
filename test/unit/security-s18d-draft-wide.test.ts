/**
 * plugin_draft_from_capture drafts inside the server, from answers a web page chose. Shapes were
 * merged by copying every field seen so far at each sample, and every distinct key became a field:
 * an answer of 5,000 objects each with a key of its own cost n² copies (40 such answers held the
 * server ≈ 2 minutes) and wrote a 5,000-field schema per tool (30 MB of draft). Objects with more
 * than DRAFT_MAX_PROPS distinct keys are now drafted as records, and merging is linear.
 */
import { expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCapture } from '../../plugins/tooling/draft/capture.ts';
import { draftPlugin } from '../../plugins/tooling/draft/generate.ts';
import { DRAFT_MAX_PROPS, infer, inferredCode } from '../../plugins/tooling/draft/schema.ts';

test('a list of objects each with a key of its own is drafted as a list of records', () => {
  const list = Array.from({ length: 5_000 }, (_, i) => ({ [`f${i}`]: i }));
  const code = inferredCode(infer([list]), 'output', 1);
  expect(code).toBe('v.array(v.record(v.string(), v.unknown()))');
});

test('an object of more keys than the limit is a record; one at the limit keeps its fields', () => {
  const at = Object.fromEntries(Array.from({ length: DRAFT_MAX_PROPS }, (_, i) => [`k${i}`, i]));
  const over = { ...at, extra: 1 };
  expect(inferredCode(infer([over]), 'output', 1)).toBe('v.record(v.string(), v.unknown())');
  const kept = inferredCode(infer([at]), 'output', 1);
  expect(kept.startsWith('v.looseObject({')).toBe(true);
  expect(kept).toContain(`k${DRAFT_MAX_PROPS - 1}: v.pipe(v.number(), v.integer()),`);
});

test('small shapes merge as before: optional fields, nullable, picklists of 2–3 values', () => {
  const code = inferredCode(infer([{ a: 'x', b: 1, c: null }, { a: 'y', b: 2.5 }, { a: 'x', b: 3, c: 'z' }]), 'input', 3);
  expect(code).toBe('v.object({\n  a: v.picklist(["x","y"]),\n  b: v.number(),\n  c: v.optional(v.nullable(v.string())),\n})');
  // A fourth distinct value: plain text.
  expect(inferredCode(infer([{ s: 'a' }, { s: 'b' }, { s: 'c' }, { s: 'd' }]), 'input', 4)).toBe('v.object({\n  s: v.string(),\n})');
});

test('a capture of 40 such answers drafts a plugin of bounded size', async () => {
  const list = JSON.stringify(Array.from({ length: 5_000 }, (_, i) => ({ [`f${i}`]: i })));
  const requests = Array.from({ length: 40 }, (_, r) => ({
    method: 'GET',
    url: `https://app.example.com/api/r${r}/items`,
    status: 200,
    mimeType: 'application/json',
    requestHeaders: {},
    responseHeaders: {},
    responseBody: { text: list },
  }));
  const root = mkdtempSync(join(tmpdir(), 'opentabs-s18d-draft-'));
  try {
    const r = await draftPlugin('wide', parseCapture({ requests }), { dir: join(root, 'opentabs-plugin-wide') });
    expect(r.tools.length).toBe(40);
    const index = readFileSync(join(r.dir, 'src', 'index.ts'), 'utf8');
    // 40 tools of a few lines each: no field per recorded key.
    expect(index.length).toBeLessThan(40 * 1_000);
    expect(index).toContain('output: v.array(v.record(v.string(), v.unknown())),');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
