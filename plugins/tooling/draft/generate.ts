/**
 * Draft a plugin from recorded traffic: one tool per API operation (operations.ts), with input and
 * output schemas inferred from what was seen (schema.ts), a handler on the SDK's fetch helpers that
 * sends the app's CSRF header the way its frontend did (detected, never copied), a test per tool
 * that replays the recorded (redacted) answer through the SDK's runTool, and DRAFT.md saying what
 * was found and what to check. Written into a normal plugin project (the `plugin create` layout),
 * so `npm run build`, `npm test` and `npm run add` work unchanged. No secret is written: header
 * values are never read into the draft, and samples and the literals of GraphQL query texts are
 * redacted (redact.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createPlugin } from '../create.ts';
import type { Captured } from './capture.ts';
import { groupOperations, type Operation } from './operations.ts';
import { redact, redactGraphqlQuery } from './redact.ts';
import { infer, inferredCode } from './schema.ts';

export interface DraftOptions {
  /** Project folder (default ./opentabs-plugin-<name>). */
  dir?: string;
  /** The app's origin (default the one with the most API calls). */
  origin?: string;
}

export interface DraftResult {
  dir: string;
  origin: string;
  tools: { name: string; method: string; path: string; calls: number }[];
  csrf: { header: string; cookie?: string; fromResponse?: { path: string; key: string } } | null;
  next: string;
}

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const prop = (k: string) => (IDENT.test(k) && k !== '__proto__' ? `input.${k}` : `input[${JSON.stringify(k)}]`);
/** A recorded name as an object literal's key: `__proto__: x` would set the object's prototype instead. */
const objectKey = (k: string) => (k === '__proto__' ? '["__proto__"]' : IDENT.test(k) ? k : JSON.stringify(k));
/** Recorded JSON as code: a literal, or parsed from a string when it holds a "__proto__" key (a literal would set a prototype). */
const jsonCode = (x: unknown) => {
  const text = JSON.stringify(x ?? null);
  return text.includes('"__proto__"') ? `JSON.parse(${JSON.stringify(text)})` : text;
};
/** Recorded text inside a template literal: \\, ` and ${ escaped, so it stays text. */
const templateText = (s: string) => s.replace(/\\|`|\$(?=\{)/g, (m) => `\\${m}`);

/** The code of an operation's URL: a template literal of its recorded segments with the parameters put in. */
function urlCode(op: Operation): string {
  if (op.kind === 'graphql') return `\`${templateText(op.template)}\``;
  const parts = op.segments.map((s) => (typeof s === 'string' ? templateText(s) : `\${encodeURIComponent(String(${prop(s.param)}))}`));
  return `\`/${parts.join('/')}\``;
}

/** The path a sample input makes (the test's route). */
function samplePath(op: Operation, input: Json): string {
  if (op.kind === 'graphql') return op.template;
  return `/${op.segments.map((s) => (typeof s === 'string' ? s : encodeURIComponent(String(input[s.param])))).join('/')}`;
}
const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

type Csrf = { header: string; cookie?: string; fromResponse?: { path: string; key: string } };

/**
 * The CSRF header the frontend sent on writes, and where it took the value from: a cookie, a
 * field of an earlier JSON answer (e.g. GET /api/session → {csrfToken}), or else the page (a meta
 * tag). Values are compared here and never stored.
 */
function detectCsrf(captured: Captured[], origin: string): Csrf | null {
  const counts = new Map<string, number>();
  let cookie: string | undefined;
  let fromResponse: Csrf['fromResponse'];
  for (const [index, c] of captured.entries()) {
    if (c.method === 'GET' || !c.url.startsWith(origin)) continue;
    for (const [name, value] of Object.entries(c.requestHeaders)) {
      if (!/csrf|xsrf/i.test(name)) continue;
      counts.set(name, (counts.get(name) ?? 0) + 1);
      for (const part of (c.requestHeaders.cookie ?? '').split(';')) {
        const i = part.indexOf('=');
        if (i > 0 && decodeURIComponent(part.slice(i + 1).trim()) === value) cookie = part.slice(0, i).trim();
      }
      if (cookie || fromResponse) continue;
      for (const earlier of captured.slice(0, index)) {
        if (earlier.method !== 'GET' || !earlier.url.startsWith(origin)) continue;
        let body: unknown;
        try {
          body = JSON.parse(earlier.responseBody ?? '');
        } catch {
          continue;
        }
        const key = isObject(body) ? Object.keys(body).find((k) => body[k] === value) : undefined;
        if (key) fromResponse = { path: new URL(earlier.url).pathname, key };
      }
    }
  }
  const header = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (!header) return null;
  return { header, ...(cookie ? { cookie } : fromResponse ? { fromResponse } : {}) };
}

interface Fields {
  path: string[];
  query: string[];
  /** Body fields, or null when the body is not an object (sent whole as input.body). */
  body: string[] | null;
  hasBody: boolean;
}

function fieldsOf(op: Operation): Fields {
  const query = [...new Set(op.samples.flatMap((s) => Object.keys(s.query)))];
  const bodies = op.samples.map((s) => s.body).filter((b) => b !== undefined);
  const objects = bodies.every(isObject);
  const body = op.kind === 'graphql' || !objects ? null : [...new Set(bodies.flatMap((b) => Object.keys(b as Json)))];
  return { path: op.params, query: query.filter((q) => !op.params.includes(q)), body: body?.filter((k) => !op.params.includes(k) && !query.includes(k)) ?? null, hasBody: bodies.length > 0 };
}

/** One sample as the tool's input (redacted): path params, query params, body fields. */
function inputSample(op: Operation, f: Fields, i: number): Json {
  const s = op.samples[i]!;
  if (op.kind === 'graphql') return (redact(isObject(s.body) ? s.body : {}) as Json) ?? {};
  const out: Json = { ...s.path, ...s.query };
  if (f.body) Object.assign(out, isObject(s.body) ? s.body : {});
  else if (s.body !== undefined) out.body = s.body;
  return redact(out) as Json;
}

function description(op: Operation, appName: string, output: unknown): string {
  const calls = `${op.samples.length} recorded call${op.samples.length === 1 ? '' : 's'}`;
  const fields = isObject(output) ? Object.keys(output).slice(0, 6) : Array.isArray(output) ? ['a list'] : [];
  const returns = fields.length ? ` Returns ${fields.join(', ')}.` : '';
  if (op.kind === 'graphql') return `${appName} GraphQL operation ${op.graphql!.operationName} (drafted from ${calls}).${returns}`;
  const change = op.method === 'GET' ? '' : ` Changes data in ${appName}.`;
  return `${op.method} ${op.template} in ${appName} (drafted from ${calls}).${change}${returns}`;
}

function toolCode(op: Operation, f: Fields, appName: string, csrfCall: string): string {
  const inputs = op.samples.map((_, i) => inputSample(op, f, i));
  const outputs = op.samples.map((s) => redact(s.response));
  const inputCode = inferredCode({ ...infer(inputs), nullable: false }, 'input', inputs.length, '  ');
  const outputCode = inferredCode(infer(outputs), 'output', outputs.length, '  ');
  const url = urlCode(op);
  const opts = [`signal: ctx.signal`];
  if (op.method !== 'GET' && csrfCall) opts.push(`headers: ${csrfCall}`);
  if (f.query.length) opts.push(`query: { ${f.query.map((q) => `${objectKey(q)}: ${prop(q)} as string | number | boolean | undefined`).join(', ')} }`);
  const body = f.body ? `{ ${f.body.map((k) => `${objectKey(k)}: ${prop(k)}`).join(', ')} }` : f.hasBody ? 'input.body' : 'undefined';
  let call: string;
  if (op.kind === 'graphql') {
    // graphql() turns the errors a GraphQL server sends with HTTP 200 into ToolErrors by their code.
    call = `return (await graphql(${url}, ${JSON.stringify(redactGraphqlQuery(op.graphql!.query))}, input, { operationName: ${JSON.stringify(op.graphql!.operationName)}, ${opts.join(', ')} })) as never;`;
  } else {
    const fn = ({ GET: 'fetchJson', POST: 'postJson', PUT: 'putJson', PATCH: 'patchJson', DELETE: 'deleteJson' } as Record<string, string>)[op.method] ?? 'fetchJson';
    const args = fn === 'fetchJson' ? `${url}, { ${opts.join(', ')}${op.method !== 'GET' ? `, method: ${JSON.stringify(op.method)}` : ''} }` : `${url}, ${body}, { ${opts.join(', ')} }`;
    call = `return (await ${fn}(${args})) as never;`;
  }
  // GET and GraphQL queries read; every other method and every mutation may change or delete data.
  const reads = op.kind === 'graphql' ? !/^\s*mutation\b/.test(op.graphql!.query) : op.method === 'GET';
  return `const ${camel(op.tool)} = defineTool({
  name: ${JSON.stringify(op.tool)},
  description: ${JSON.stringify(description(op, appName, outputs[0]))},
  annotations: ${reads ? '{ readOnlyHint: true }' : '{ destructiveHint: true }'},
  input: ${inputCode},
  output: ${outputCode},
  async handle(input, ctx) {
    ${call}
  },
});`;
}

function testCode(name: string, origin: string, ops: Operation[], fields: Map<Operation, Fields>, csrf: Csrf | null): string {
  const cases = ops.map((op) => {
    const f = fields.get(op)!;
    const input = inputSample(op, f, 0);
    const response = redact(op.samples[0]!.response);
    const path = samplePath(op, input);
    const answer = op.kind === 'graphql' ? { data: response } : response;
    return `test(${JSON.stringify(`${op.tool} answers as recorded`)}, async () => {
  const requests: Request[] = [];
  const { outcome } = await runTool(plugin, ${JSON.stringify(op.tool)}, ${jsonCode(input)}, {
    page,
    requests,
    routes: { ${csrf?.fromResponse && op.method !== 'GET' ? `${JSON.stringify(`GET ${csrf.fromResponse.path}`)}: () => (${jsonCode({ [csrf.fromResponse.key]: 'test-token' })}), ` : ''}${JSON.stringify(`${op.method} ${path}`)}: () => (${jsonCode(answer)}) },
  });
  expect(outcome).toEqual({ ok: true, value: ${jsonCode(response)} });
  const call = requests.find((r) => r.method === ${JSON.stringify(op.method)} && new URL(r.url).pathname === ${JSON.stringify(path)});
  expect(call).toBeDefined();${op.method !== 'GET' && csrf ? `\n  expect(call?.headers.get(${JSON.stringify(csrf.header)})).toBe('test-token');` : ''}
});`;
  });
  const cookie = csrf?.cookie ? `${csrf.cookie}=test-token` : '';
  return `// Drafted by \`opentabs plugin create ${name} --from-capture\`: each tool against its recorded (redacted) answer.
import { afterEach, expect, test } from 'bun:test';
import { runTool } from '@opentabs/sdk/testing';
import plugin from '../src/index.ts';

const page = { url: ${JSON.stringify(`${origin}/`)}, meta: { 'csrf-token': 'test-token' }, cookie: ${JSON.stringify(cookie)} };
const g = globalThis as Record<string, unknown>;
afterEach(() => {
  delete g.document;
  delete g.location;
});

${cases.join('\n\n')}
`;
}

export async function draftPlugin(name: string, captured: Captured[], o: DraftOptions = {}): Promise<DraftResult> {
  const grouped = groupOperations(captured, o.origin);
  if (grouped.operations.length === 0) {
    const why = Object.entries(grouped.skipped).map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
    throw new Error(
      `No API calls to draft from: ${captured.length} request${captured.length === 1 ? '' : 's'} captured (${why})${grouped.origin ? ` for ${grouped.origin}` : ''}. ` +
        'Turn on capture with bodies (browser_enable_network_capture {captureBodies: true}), use the app for a while, then try again.',
    );
  }
  const origin = grouped.origin;
  const appName = new URL(origin).hostname;
  const csrf = detectCsrf(captured, origin);
  const csrfCall = !csrf ? '' : csrf.fromResponse ? 'await csrfFromApp(ctx.signal)' : `csrfHeaders(${JSON.stringify(csrf.header)}${csrf.cookie ? `, { cookie: ${JSON.stringify(csrf.cookie)} }` : ''})`;
  // The token an earlier answer carried: read once per page, the way the frontend does.
  const csrfHelper = csrf?.fromResponse
    ? `\nlet csrfToken: string | undefined;\nasync function csrfFromApp(signal: AbortSignal): Promise<Record<string, string>> {\n  csrfToken ??= String((await fetchJson<Record<string, unknown>>(${JSON.stringify(csrf.fromResponse.path)}, { signal }))[${JSON.stringify(csrf.fromResponse.key)}] ?? '');\n  return { ${JSON.stringify(csrf.header)}: csrfToken };\n}\n`
    : '';
  const created = await createPlugin(name, o.dir, { urlPattern: `${origin}/*` });
  const fields = new Map(grouped.operations.map((op) => [op, fieldsOf(op)] as const));
  const helpers = ['definePlugin', 'defineTool', ...(csrf?.fromResponse ? ['fetchJson'] : []), ...new Set(grouped.operations.flatMap((op) => (op.kind === 'graphql' ? ['graphql'] : [({ GET: 'fetchJson', POST: 'postJson', PUT: 'putJson', PATCH: 'patchJson', DELETE: 'deleteJson' } as Record<string, string>)[op.method] ?? 'fetchJson']))), ...(csrf && !csrf.fromResponse ? ['csrfHeaders'] : [])];
  const index = `// Drafted by \`opentabs plugin create ${name} --from-capture\` from recorded traffic of ${origin}.
// Read DRAFT.md, check each tool's name, description and schemas, then build and test.
import * as v from 'valibot';
import { ${[...new Set(helpers)].join(', ')} } from '@opentabs/sdk';
${csrfHelper}
${grouped.operations.map((op) => toolCode(op, fields.get(op)!, appName, csrfCall)).join('\n\n')}

export default definePlugin({
  name: ${JSON.stringify(name)},
  displayName: ${JSON.stringify(appName)},
  description: ${JSON.stringify(`Use ${appName} from your AI agent through the tab you are logged in to (drafted from recorded traffic).`)},
  urlPatterns: [${JSON.stringify(`${origin}/*`)}],
  isReady: () => document.readyState !== 'loading',
  tools: [${grouped.operations.map((op) => camel(op.tool)).join(', ')}],
});
`;
  await writeFile(join(created.dir, 'src', 'index.ts'), index);
  await writeFile(join(created.dir, 'test', 'plugin.test.ts'), testCode(name, origin, grouped.operations, fields, csrf));
  const tools = grouped.operations.map((op) => ({ name: `${name}_${op.tool}`, method: op.method, path: op.kind === 'graphql' ? `${op.template} (${op.graphql!.operationName})` : op.template, calls: op.samples.length }));
  await writeFile(
    join(created.dir, 'DRAFT.md'),
    `# ${name}: a draft from recorded traffic of ${origin}\n\n` +
      `Tools (each starts at "ask" once added):\n\n${tools.map((t) => `- \`${t.name}\` — ${t.method} ${t.path}, from ${t.calls} call${t.calls === 1 ? '' : 's'}`).join('\n')}\n\n` +
      `Authentication: the tab's cookies (sent by every call)${csrf ? `; the \`${csrf.header}\` header, taken from ${csrf.cookie ? `the \`${csrf.cookie}\` cookie` : csrf.fromResponse ? `\`${csrf.fromResponse.key}\` of GET ${csrf.fromResponse.path}` : 'the page (meta tag or cookie)'} on every write` : ''}.\n\n` +
      'Check before use: names and descriptions (the agent reads them), which inputs are required, ' +
      'and the output schemas (they list only the fields that were seen). Recorded values that looked ' +
      'like secrets were replaced by "<redacted>" in the tests, and so were such values written into a GraphQL query\'s ' +
      'text (pass them as variables instead).\n',
  );
  return { dir: created.dir, origin, tools, csrf, next: created.next };
}
