/**
 * parsePageMessage (server/protocol/page-channel-schema.ts) with a fast path for the message every
 * tool call sends: a `result`. The tab bridge and the service worker both check every page
 * message; running the valibot variant schema for each result cost more than the rest of the
 * check. For a result, PageToBridgeSchema requires exactly this: `id` and `plugin` strings of 1 to
 * PAGE_MESSAGE_ID_MAX_CHARS characters, `ok` a boolean (`value` and `error` are free, the caps are
 * sanitizePageMessage's); such a message is accepted and capped as parsePageMessage would, and
 * anything else goes through parsePageMessage itself (same answer, same error texts).
 * test/unit/page-channel-extension.test.ts checks both paths agree.
 */
import { sanitizePageMessage, type PageToBridge } from '../../server/protocol/page-channel.ts';
import { parsePageMessage } from '../../server/protocol/page-channel-schema.ts';
import { PAGE_MESSAGE_ID_MAX_CHARS } from '../../server/protocol/limits.ts';

const name = (x: unknown): boolean => typeof x === 'string' && x.length > 0 && x.length <= PAGE_MESSAGE_ID_MAX_CHARS;

export function checkPageMessage(raw: unknown): { ok: true; msg: PageToBridge } | { ok: false; error: string } {
  if (raw && typeof raw === 'object') {
    const m = raw as Record<string, unknown>;
    if (m.type === 'result' && name(m.id) && name(m.plugin) && typeof m.ok === 'boolean') {
      const msg = sanitizePageMessage(m);
      // Unreachable for a message the schema accepts, kept in step with parsePageMessage.
      return msg ? { ok: true, msg } : { ok: false, error: 'Malformed page message: refused by the page channel caps' };
    }
  }
  return parsePageMessage(raw);
}
