/**
 * The on-disk plugin format, defined once: package names, plugin/tool names, URL match
 * patterns, the configSchema and dist/tools.json. Used by discovery (server) and by
 * `opentabs plugin build` (plugins/tooling), so a manifest the build accepts is one the server
 * loads, and both reject a bad one with the same message naming the field.
 */
import * as v from 'valibot';
import { isMatchPattern } from './match-pattern.ts';
import { PLUGIN_NAME_RE, reservedPluginName } from './plugin-name.ts';

/** Settings field types of a plugin's configSchema (the SDK's definePlugin re-exports these). */
export const CONFIG_FIELD_TYPES = ['string', 'url', 'number', 'boolean', 'select'] as const;
export type ConfigFieldType = (typeof CONFIG_FIELD_TYPES)[number];

export interface ConfigField {
  type: ConfigFieldType;
  label?: string;
  description?: string;
  required?: boolean;
  default?: string | number | boolean;
  /** Choices for `select`. */
  options?: readonly string[];
}

export type ConfigSchema = Record<string, ConfigField>;

/** `opentabs-plugin-<name>` or `@scope/opentabs-plugin-<name>`. */
export const PACKAGE_NAME_RE = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?opentabs-plugin-([a-z0-9]+(?:-[a-z0-9]+)*)$/;
/** Tool names: lowercase snake_case. */
export const TOOL_NAME_RE = /^[a-z][a-z0-9_]*$/;
export { PAGE_TOOL_PREFIX_RE, PLUGIN_NAME_RE, RESERVED_PLUGIN_NAMES, fitPluginName, reservedPluginName } from './plugin-name.ts';
/** MCP clients commonly cap tool names at 64 characters. */
export const MAX_TOOL_FULL_NAME = 64;
/**
 * Names that reach Object.prototype through plain-object property access (`obj[name]`): never a
 * plugin, tool or setting name, and refused as a key in settings sent to the server.
 */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.includes(key);
}

/**
 * Domains under which every name is someone else's site, so `*.<one of them>` is as wide as
 * `*.com`: the second-level labels registries under two-letter country codes give to everyone
 * (`co.uk`, `com.au`, `org.br` …) and shared hosting (`github.io`, `herokuapp.com` …).
 */
const PUBLIC_SECOND_LEVEL: ReadonlySet<string> = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'or', 'ne', 'go', 'gob', 'gouv', 'mil', 'nic', 'ltd', 'plc', 'sch', 'nom', 'info', 'biz']);
/**
 * Shared-hosting zones, each a name whose direct subdomains are customers' sites. A `*` label
 * stands for one label of letters, digits and hyphens (a region or storage zone): storage and
 * static-site hosts put customers one or two levels below the provider's domain
 * (`bucket.s3.us-east-1.amazonaws.com`, `account.z13.web.core.windows.net`).
 */
const SHARED_HOSTING: readonly string[] = [
  'github.io', 'githubusercontent.com', 'gitlab.io', 'herokuapp.com', 'herokudns.com', 'blogspot.com', 'netlify.app', 'netlify.com', 'vercel.app', 'now.sh',
  'pages.dev', 'workers.dev', 'glitch.me', 'ngrok.io', 'ngrok.app', 'ngrok-free.app', 'onrender.com', 'fly.dev', 'surge.sh', 'deno.dev', 'replit.app', 'repl.co',
  'up.railway.app', 'trycloudflare.com', 'loca.lt',
  // Google: App Engine (also per region, `project.uc.r.appspot.com`), Firebase, Cloud Run, Cloud Storage.
  'appspot.com', 'r.appspot.com', '*.r.appspot.com', 'firebaseapp.com', 'web.app', 'run.app', 'a.run.app', 'storage.googleapis.com', 'cloudfunctions.net',
  // Amazon: S3 buckets (global, regional, dual-stack, website endpoints), CloudFront, Amplify, Beanstalk, EC2 names.
  'amazonaws.com', 's3.amazonaws.com', 's3.*.amazonaws.com', 's3-*.amazonaws.com', 's3.dualstack.*.amazonaws.com', 's3-website.*.amazonaws.com',
  's3-accesspoint.*.amazonaws.com', 'execute-api.*.amazonaws.com', 'compute.amazonaws.com', '*.compute.amazonaws.com',
  'cloudfront.net', 'amplifyapp.com', 'elasticbeanstalk.com', '*.elasticbeanstalk.com', 'awsapps.com',
  // Microsoft Azure: App Service, storage blobs and static websites (per zone), static web apps, CDN, cloud services.
  'azurewebsites.net', 'scm.azurewebsites.net', 'blob.core.windows.net', 'web.core.windows.net', '*.web.core.windows.net', 'file.core.windows.net',
  'dfs.core.windows.net', 'azurestaticapps.net', '*.azurestaticapps.net', 'azureedge.net', 'azurefd.net', 'cloudapp.net', '*.cloudapp.azure.com',
  'trafficmanager.net',
];
const SHARED_HOSTING_RE: readonly RegExp[] = SHARED_HOSTING.map(
  (zone) => new RegExp(`^${zone.replaceAll('.', '\\.').replaceAll('*', '[a-z0-9-]+')}$`),
);
function isPublicSuffix(domain: string): boolean {
  // Only IP addresses end in a number (no top-level domain is one): `*.0.1` covers 127.0.0.1,
  // 10.0.0.1, 192.168.0.1 … — every machine of those numbers, no one site.
  if (/(^|\.)\d+$/.test(domain)) return true;
  const labels = domain.split('.');
  if (labels.length === 1) return true;
  if (labels.length === 2 && /^[a-z]{2}$/.test(labels[1]!) && PUBLIC_SECOND_LEVEL.has(labels[0]!)) return true;
  return SHARED_HOSTING_RE.some((re) => re.test(domain));
}

/**
 * A match pattern that covers every site (`<all_urls>`, a `*` host, a whole top-level domain such
 * as `*.com`, or a public suffix such as `*.co.uk` or `*.github.io`) or every local file
 * (`file:///*`). Such a plugin runs its adapter in every page it matches, so adding it needs
 * explicit consent and its tools start `off`.
 */
export function isBroadPattern(pattern: string): boolean {
  if (pattern === '<all_urls>') return true;
  const m = /^([^:]+):\/\/([^/]*)(\/.*)$/.exec(pattern);
  if (!m) return false;
  const [, scheme, host, path] = m as unknown as [string, string, string, string];
  if (scheme === 'file') return broadFilePath(path);
  if (host === '*') return true;
  // A name's trailing dot (`com.`, the fully qualified form) names the same domain: `*.com.` covers
  // every .com site as its browser address `bank.com.`.
  return host.startsWith('*.') && isPublicSuffix(host.slice(2).replace(/:\d+$/, '').replace(/\.+$/, '').toLowerCase());
}

/**
 * A file pattern's path that covers a whole drive or every user's folder (`/*`, `/C:/*`,
 * `/home/*`, `/Users/*`, `/h*`): it names fewer than two folders before its first wildcard. One
 * user's folder (`/home/me/*`, `/C:/Users/me/*`) is not every file.
 */
function broadFilePath(path: string): boolean {
  const star = path.indexOf('*');
  if (star < 0) return false;
  const fixed = path.slice(0, star).replace(/^\/[A-Za-z]:(?=\/|$)/, '');
  const folders = fixed.split('/').slice(1, -1).filter((s) => s !== '' && s !== '.' && s !== '..');
  return folders.length < 2;
}

/** The broad patterns among a plugin's urlPatterns (empty when it names its sites). */
export function broadPatterns(patterns: readonly string[]): string[] {
  return patterns.filter(isBroadPattern);
}

/** The plugin name a package name carries, or null when the package name is not a plugin's. */
export function pluginNameFromPackage(packageName: string): string | null {
  return PACKAGE_NAME_RE.exec(packageName)?.[1] ?? null;
}

const NonEmpty = (what: string) => v.pipe(v.string(`${what} must be a string`), v.trim(), v.nonEmpty(`${what} must not be empty`));

const MatchPattern = v.pipe(
  v.string('must be a string'),
  v.check(isMatchPattern, (i) => `${JSON.stringify(i.input)} is not a Chrome match pattern like "https://app.example.com/*"`),
);

const JsonObject = v.custom<Record<string, unknown>>(
  (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
  'must be a JSON Schema object',
);

export const ConfigFieldSchema = v.pipe(
  v.strictObject(
    {
      type: v.picklist(CONFIG_FIELD_TYPES, `type must be one of ${CONFIG_FIELD_TYPES.join(', ')}`),
      label: v.optional(v.string()),
      description: v.optional(v.string()),
      required: v.optional(v.boolean()),
      default: v.optional(v.union([v.string(), v.number(), v.boolean()])),
      options: v.optional(v.pipe(v.array(v.string()), v.nonEmpty('options must list at least one choice'))),
    },
    (i) => `unknown key ${JSON.stringify(i.input)}`,
  ),
  v.check((f) => f.type !== 'select' || (f.options?.length ?? 0) > 0, 'a select field needs options'),
  v.check((f) => f.default === undefined || checkFieldValue(f, f.default) === null, 'default does not match the field type'),
);

export const ConfigSchemaSchema = v.record(
  v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'setting names must be identifiers'), v.check((n) => !isForbiddenKey(n), (i) => `"${i.input}" cannot be a setting name`)),
  ConfigFieldSchema,
);

export const ToolManifestSchema = v.object({
  name: v.pipe(v.string(), v.regex(TOOL_NAME_RE, 'tool names must be lowercase snake_case (a-z, 0-9, _)'), v.check((n) => !isForbiddenKey(n), (i) => `"${i.input}" cannot be a tool name`)),
  description: NonEmpty('description'),
  inputSchema: v.pipe(
    JsonObject,
    v.check((s) => s.type === 'object', 'inputSchema must be a JSON Schema with "type": "object"'),
  ),
  outputSchema: v.optional(JsonObject),
  annotations: v.optional(
    v.strictObject({
      title: v.optional(v.pipe(v.string(), v.maxLength(200, 'annotations.title: at most 200 characters'))),
      readOnlyHint: v.optional(v.boolean()),
      destructiveHint: v.optional(v.boolean()),
      idempotentHint: v.optional(v.boolean()),
      openWorldHint: v.optional(v.boolean()),
    }),
  ),
});

export const ToolsJsonSchema = v.pipe(
  v.object({
    name: v.pipe(v.string(), v.regex(PLUGIN_NAME_RE, 'plugin names are lowercase words joined by hyphens'),
      v.check((n) => reservedPluginName(n) === null, (i) => reservedPluginName(i.input) ?? ''),
      v.check((n) => !isForbiddenKey(n), (i) => `"${i.input}" cannot be a plugin name`)),
    displayName: NonEmpty('displayName'),
    description: NonEmpty('description'),
    version: NonEmpty('version'),
    sdkVersion: v.optional(v.nullable(v.string())),
    urlPatterns: v.pipe(v.array(MatchPattern), v.nonEmpty('urlPatterns must list at least one match pattern')),
    excludePatterns: v.optional(v.array(MatchPattern), []),
    homepage: v.optional(v.pipe(v.string(), v.url('homepage must be a URL'))),
    iconSvg: v.optional(v.pipe(v.string(), v.startsWith('<svg', 'iconSvg must be SVG markup starting with <svg'))),
    configSchema: v.optional(ConfigSchemaSchema),
    tools: v.pipe(v.array(ToolManifestSchema), v.nonEmpty('tools must list at least one tool')),
  }),
  v.check((m) => new Set(m.tools.map((t) => t.name)).size === m.tools.length, (i) => {
    const seen = new Set<string>();
    const dup = i.input.tools.find((t) => (seen.has(t.name) ? true : (seen.add(t.name), false)));
    return `tools: duplicate tool name "${dup?.name}"`;
  }),
  v.check(
    (m) => m.tools.every((t) => `${m.name}_${t.name}`.length <= MAX_TOOL_FULL_NAME),
    (i) => {
      const full = i.input.tools.map((t) => `${i.input.name}_${t.name}`).find((n) => n.length > MAX_TOOL_FULL_NAME) ?? '';
      return `tools: "${full}" is ${full.length} characters; MCP clients (Cursor, and others backed by OpenAI models) refuse tool names longer than ${MAX_TOOL_FULL_NAME}, the plugin name and "_" included: shorten the tool or the plugin name`;
    },
  ),
);

export type ToolsJson = v.InferOutput<typeof ToolsJsonSchema>;

/** "field.path: message" for the first issue, so errors name the bad field. */
export function describeIssue(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid';
  const path = v.getDotPath(issue);
  return path ? `${path}: ${issue.message}` : issue.message;
}

export function parseToolsJson(raw: unknown): { ok: true; value: ToolsJson } | { ok: false; error: string } {
  const r = v.safeParse(ToolsJsonSchema, raw);
  return r.success ? { ok: true, value: r.output } : { ok: false, error: describeIssue(r.issues) };
}

/** null when `value` fits the field; otherwise what is wrong with it. */
export function checkFieldValue(field: { type: string; options?: readonly string[] }, value: unknown): string | null {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? null : 'must be a string';
    case 'url': {
      if (typeof value !== 'string') return 'must be a URL string';
      try {
        const u = new URL(value);
        return u.protocol === 'http:' || u.protocol === 'https:' ? null : 'must be an http(s) URL';
      } catch {
        return 'must be a valid URL';
      }
    }
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'select':
      return typeof value === 'string' && (field.options ?? []).includes(value)
        ? null
        : `must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`;
    default:
      return `has unknown type ${field.type}`;
  }
}

/**
 * Validate settings against a configSchema. `partial` accepts a subset (missing required fields
 * are reported only when the merged result lacks them). Returns the first problem, naming the field.
 */
export function validateSettings(schema: ConfigSchema | undefined, settings: Record<string, unknown>): string | null {
  const fields = schema ?? {};
  for (const [key, value] of Object.entries(settings)) {
    if (isForbiddenKey(key)) return `${key}: cannot be a setting name`;
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!field) {
      const known = Object.keys(fields);
      return `${key}: unknown setting${known.length ? ` (known: ${known.join(', ')})` : ' (this plugin has no settings)'}`;
    }
    if (value === null || value === undefined) {
      if (field.required) return `${key}: is required`;
      continue;
    }
    const problem = checkFieldValue(field, value);
    if (problem) return `${key}: ${problem}`;
  }
  for (const [key, field] of Object.entries(fields)) {
    const given = Object.hasOwn(settings, key) ? settings[key] : undefined;
    if (field.required && field.default === undefined && (given === undefined || given === null)) {
      return `${key}: is required`;
    }
  }
  return null;
}

/** Defaults from the schema overlaid with saved values (unknown saved keys dropped). */
export function resolveSettings(schema: ConfigSchema | undefined, saved: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema ?? {})) {
    const value = saved && Object.hasOwn(saved, key) ? saved[key] : undefined;
    if (value !== undefined && value !== null && checkFieldValue(field, value) === null) out[key] = value;
    else if (field.default !== undefined) out[key] = field.default;
  }
  return out;
}
