/**
 * From recorded requests to operations: the app origin's API calls (JSON or GraphQL, answered
 * 2xx), grouped by method + path template (ids, numbers, UUIDs and hex or digit-bearing slugs
 * become named parameters) or, for GraphQL, by operation name. Each operation gets a tool name
 * from its method and resource, and its samples: path parameters, query parameters, JSON body and
 * JSON response of every call seen.
 */
import type { Captured } from './capture.ts';

export interface Sample {
  path: Record<string, string>;
  /** Query parameters; a value written as a plain number (`?limit=5`) is that number. */
  query: Record<string, string | number>;
  body: unknown;
  response: unknown;
}

export interface Operation {
  kind: 'rest' | 'graphql';
  tool: string;
  method: string;
  /** e.g. /api/cards/:cardId/move */
  template: string;
  params: string[];
  /**
   * The template's path segments: a string is recorded text (kept as is, even one that starts with
   * ':'), { param } a parameter. The draft builds its URLs from these, never by reading the template.
   */
  segments: (string | { param: string })[];
  /** GraphQL: the operation's query text and name. */
  graphql?: { operationName: string; query: string };
  samples: Sample[];
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const parseJson = (t: string | undefined): unknown => {
  if (t === undefined || t === '') return undefined;
  try {
    return clipDepth(JSON.parse(t), DRAFT_MAX_DEPTH);
  } catch {
    return undefined;
  }
};

/**
 * Objects and arrays of a recorded body nested deeper than this become null (drafted as
 * v.unknown()). A schema is written with one indented line per level: a page's 14 KB body of
 * 7,000 nested arrays made a 200 MB draft and held the server for seconds.
 */
export const DRAFT_MAX_DEPTH = 32;

function clipDepth(value: unknown, levels: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (levels <= 0) return null;
  if (Array.isArray(value)) return value.map((v) => clipDepth(v, levels - 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: clipDepth(v, levels - 1), enumerable: true, writable: true, configurable: true });
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isParamSegment = (s: string) => /^\d+$/.test(s) || UUID.test(s) || /^[0-9a-f]{12,}$/i.test(s) || (/\d/.test(s) && /^[\w-]{8,}$/.test(s));
/** Path segments that say nothing of the resource. */
const NOISE = new Set(['api', 'rest', 'v1', 'v2', 'v3', 'v4', 'internal', 'ajax', 'json']);

export function singular(word: string): string {
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word) && !/ss$/.test(word)) return word.slice(0, -1);
  return word;
}
export const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
const camel = (s: string) => snake(s).replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * A query value as the tool's input takes it: a plain decimal number (`5`, `-2`, `0.5`) becomes a
 * number, so the drafted schema asks the agent for a number; anything else stays text — leading
 * zeros (`007`, a code), digits beyond what a double holds exactly (an id), `true`/`false`.
 */
function queryValue(v: string): string | number {
  return /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/.test(v) ? Number(v) : v;
}

function template(pathname: string): { template: string; params: string[]; values: string[]; segments: (string | { param: string })[] } {
  const segs = pathname.split('/').filter(Boolean);
  const params: string[] = [];
  const values: string[] = [];
  const segments: (string | { param: string })[] = [];
  const out = segs.map((s, i) => {
    if (!isParamSegment(s)) return segments.push(s), s;
    const prev = segs[i - 1];
    let name = prev && !isParamSegment(prev) ? `${camel(singular(prev))}Id` : 'id';
    while (params.includes(name)) name = `${name}${params.length + 1}`;
    params.push(name);
    values.push(decodeURIComponent(s));
    segments.push({ param: name });
    return `:${name}`;
  });
  return { template: `/${out.join('/')}`, params, values, segments };
}

function restToolName(method: string, tpl: string): string {
  const segs = tpl.split('/').filter((s) => s && !NOISE.has(s.toLowerCase()));
  const last = segs[segs.length - 1] ?? 'root';
  const endsWithParam = last.startsWith(':');
  const literals = segs.filter((s) => !s.startsWith(':'));
  const resource = snake(literals[literals.length - 1] ?? 'item');
  if (endsWithParam) {
    const one = singular(resource);
    // Any other method is the page's word (fetch sends ' ` + … as is): only its letters and digits make a name.
    return ({ GET: `get_${one}`, PUT: `update_${one}`, PATCH: `update_${one}`, DELETE: `delete_${one}`, POST: `post_${one}` } as Record<string, string>)[method] ?? `${snake(method)}_${one}`;
  }
  // A singular literal right after a parameter on a write is an action on that item:
  // POST /cards/:id/move → move_card (a plural one is a collection: POST /boards/:id/cards → create_card).
  const prev = segs[segs.length - 2];
  if (method !== 'GET' && prev?.startsWith(':') && literals.length >= 2 && singular(resource) === resource) return `${resource}_${singular(snake(literals[literals.length - 2]!))}`;
  return ({ GET: `list_${resource}`, POST: `create_${singular(resource)}`, PUT: `replace_${resource}`, PATCH: `update_${resource}`, DELETE: `delete_${resource}` } as Record<string, string>)[method] ?? `${snake(method)}_${resource}`;
}

const isJsonMime = (m: string | null | undefined) => !!m && /json|graphql/i.test(m);

function graphqlOf(c: Captured, body: unknown): { operationName: string; query: string; variables: unknown } | null {
  if (!isObject(body) || typeof body.query !== 'string') return null;
  const named = typeof body.operationName === 'string' && body.operationName ? body.operationName : /\b(?:query|mutation)\s+([A-Za-z_]\w*)/.exec(body.query)?.[1];
  if (!named) return null;
  return { operationName: named, query: body.query, variables: body.variables ?? {} };
}

export interface Grouped {
  origin: string;
  operations: Operation[];
  /** Requests seen but not turned into tools, by reason (for the "nothing found" message). */
  skipped: Record<string, number>;
}

/** The API operations of `origin` (default: the origin with the most API calls). */
export function groupOperations(captured: Captured[], origin?: string): Grouped {
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  const api = captured.filter((c) => {
    if (c.status === null || c.status < 200 || c.status >= 300) return skip('not answered 2xx'), false;
    const json = isJsonMime(c.mimeType) || isJsonMime(c.responseHeaders['content-type']) || isJsonMime(c.requestHeaders['content-type']);
    if (!json) return skip('not JSON or GraphQL'), false;
    return true;
  });
  const counts = new Map<string, number>();
  for (const c of api) {
    try {
      const o = new URL(c.url).origin;
      counts.set(o, (counts.get(o) ?? 0) + 1);
    } catch {}
  }
  const chosen = origin ?? [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
  const byKey = new Map<string, Operation>();
  for (const c of api) {
    let url: URL;
    try {
      url = new URL(c.url);
    } catch {
      skip('bad URL');
      continue;
    }
    if (url.origin !== chosen) {
      skip('other origin');
      continue;
    }
    const body = parseJson(c.requestBody);
    const response = parseJson(c.responseBody);
    const query = Object.fromEntries([...url.searchParams].map(([k, v]) => [k, queryValue(v)]));
    const gql = c.method === 'POST' ? graphqlOf(c, body) : null;
    if (gql) {
      const k = `gql ${gql.operationName}`;
      const op = byKey.get(k) ?? { kind: 'graphql' as const, tool: snake(gql.operationName), method: 'POST', template: url.pathname, params: [], segments: url.pathname.split('/').filter(Boolean), graphql: { operationName: gql.operationName, query: gql.query }, samples: [] };
      op.samples.push({ path: {}, query: {}, body: gql.variables, response: isObject(response) ? response.data : response });
      byKey.set(k, op);
      continue;
    }
    const t = template(url.pathname);
    const k = `${c.method} ${t.template}`;
    const op = byKey.get(k) ?? { kind: 'rest' as const, tool: restToolName(c.method, t.template), method: c.method, template: t.template, params: t.params, segments: t.segments, samples: [] };
    op.samples.push({ path: Object.fromEntries(t.params.map((p, i) => [p, t.values[i]!])), query, body, response });
    byKey.set(k, op);
  }
  // Unique tool names.
  const used = new Map<string, number>();
  const operations = [...byKey.values()];
  for (const op of operations) {
    const n = (used.get(op.tool) ?? 0) + 1;
    used.set(op.tool, n);
    if (n > 1) op.tool = `${op.tool}_${n}`;
  }
  return { origin: chosen, operations, skipped };
}
