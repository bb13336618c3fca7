/**
 * valibot schemas of the page channel (page-channel.ts): what a web page may send the extension
 * (PageToBridge, checked on receipt by the tab bridge and again by the service worker) and what
 * the extension sends adapters (BridgeToPage). Kept apart from page-channel.ts so bundles that
 * need only its constants and caps (page tools, adapters) do not carry valibot.
 *
 * The schema checks the shape a message must have to mean anything (type, plugin, ids, numbers);
 * fields a page may get wrong without harm (log level, texts, error details) stay loose and are
 * defaulted or cut by sanitizePageMessage afterwards.
 */
import * as v from 'valibot';
import { PAGE_MESSAGE_ID_MAX_CHARS } from './limits.ts';
import { sanitizePageMessage, type PageToBridge } from './page-channel.ts';

const Name = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(PAGE_MESSAGE_ID_MAX_CHARS, `must be at most ${PAGE_MESSAGE_ID_MAX_CHARS} characters`));
const Finite = v.pipe(v.number(), v.finite());
const Loose = v.optional(v.unknown());

export const PageToBridgeSchema = v.variant('type', [
  v.object({ type: v.literal('result'), id: Name, plugin: Name, ok: v.boolean(), value: Loose, error: Loose }),
  v.object({ type: v.literal('progress'), id: Name, plugin: Name, progress: Finite, total: Loose, message: Loose }),
  v.object({ type: v.literal('log'), plugin: Name, id: v.optional(Name), level: Loose, message: Loose, data: Loose, ts: Loose }),
  v.object({ type: v.literal('registered'), plugin: Name, hash: Name }),
]);

export const BridgeToPageSchema = v.variant('type', [
  v.object({ type: v.literal('call'), id: Name, plugin: Name, tool: v.string(), input: v.record(v.string(), v.unknown()), config: v.record(v.string(), v.unknown()) }),
  v.object({ type: v.literal('cancel'), id: Name, plugin: Name, reason: v.string() }),
]);

/**
 * A page message checked against PageToBridgeSchema and then capped (sanitizePageMessage), or
 * why it was refused: "Malformed page message (progress): progress: Invalid type: Expected number
 * but received "half"". Never throws.
 */
export function parsePageMessage(raw: unknown): { ok: true; msg: PageToBridge } | { ok: false; error: string } {
  const r = v.safeParse(PageToBridgeSchema, raw);
  if (!r.success) {
    const issue = r.issues[0];
    const path = v.getDotPath(issue);
    const type = raw && typeof raw === 'object' && typeof (raw as { type?: unknown }).type === 'string' ? ` (${String((raw as { type: string }).type).slice(0, 40)})` : '';
    return { ok: false, error: `Malformed page message${type}: ${path ? `${path}: ` : ''}${issue.message}` };
  }
  const msg = sanitizePageMessage(r.output);
  return msg ? { ok: true, msg } : { ok: false, error: 'Malformed page message: refused by the page channel caps' };
}
