/**
 * parsePageMessage (server/protocol/page-channel-schema.ts) with a fast path for the message every
 * tool call sends: a `result`. The tab bridge and the service worker both check every page
 * message; running the valibot variant schema for each result cost more than the rest of the
 * check. For a result, PageToBridgeSchema requires exactly this: `id` and `plugin` strings of 1 to
 * PAGE_MESSAGE_ID_MAX_CHARS characters, `ok` a boolean (`value` and `error` are free, the caps are
 * sanitizePageMessage's); such a message is accepted and capped as parsePageMessage would, and
 * anything else goes through parsePageMessage itself (same answer, same error texts).
 * test/unit/page-channel-extension.test.ts checks both paths agree.
 *
 * Measuring a result's value against PLUGIN_RESULT_MAX_BYTES means serialising it, and a value can
 * be megabytes: the bridge skips it when the page's whole message text is within the cap
 * (`textWithin`; the worker measures exactly), and the worker keeps the text it measured
 * (checkPageMessageJson) to put in its frame to the server.
 */
import { sanitizePageMessage, utf8Bytes, type PageToBridge } from '../../server/protocol/page-channel.ts';
import { parsePageMessage } from '../../server/protocol/page-channel-schema.ts';
import { PAGE_MESSAGE_ID_MAX_CHARS, PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';

const name = (x: unknown): boolean => typeof x === 'string' && x.length > 0 && x.length <= PAGE_MESSAGE_ID_MAX_CHARS;

type Checked = { ok: true; msg: PageToBridge } | { ok: false; error: string };

/** The fields of a result the schema requires are there (the fast path's condition). */
const isResult = (raw: unknown): raw is Record<string, unknown> => {
  if (!raw || typeof raw !== 'object') return false;
  const m = raw as Record<string, unknown>;
  return m.type === 'result' && name(m.id) && name(m.plugin) && typeof m.ok === 'boolean';
};

/** Whether a message's JSON text is within PLUGIN_RESULT_MAX_BYTES as UTF-8 (counted only when it could be over). */
export function textWithinResultCap(text: string): boolean {
  if (text.length > PLUGIN_RESULT_MAX_BYTES) return false;
  return text.length * 3 <= PLUGIN_RESULT_MAX_BYTES || utf8Bytes(text) <= PLUGIN_RESULT_MAX_BYTES;
}

/**
 * The message checked and capped. `textWithin`: it arrived as JSON text of at most
 * PLUGIN_RESULT_MAX_BYTES bytes (textWithinResultCap), so an ok result's value is taken without
 * serialising it to measure; whoever passes it on measures it exactly (the worker does).
 */
export function checkPageMessage(raw: unknown, textWithin = false): Checked {
  if (isResult(raw)) {
    if (textWithin && raw.ok === true) return { ok: true, msg: { type: 'result', id: raw.id as string, plugin: raw.plugin as string, ok: true, value: raw.value } };
    const msg = sanitizePageMessage(raw);
    // Unreachable for a message the schema accepts, kept in step with parsePageMessage.
    return msg ? { ok: true, msg } : { ok: false, error: 'Malformed page message: refused by the page channel caps' };
  }
  return parsePageMessage(raw);
}

/**
 * checkPageMessage, and for an accepted ok result the JSON text of its value, the one measured
 * against the cap (the worker sends it to the server as is: the value is serialised once).
 */
export function checkPageMessageJson(raw: unknown): (Checked & { valueJson?: undefined }) | { ok: true; msg: PageToBridge; valueJson: string } {
  if (isResult(raw) && raw.ok === true) {
    let json: string | undefined;
    try {
      json = JSON.stringify(raw.value) ?? 'null';
    } catch {}
    // As sanitizePageMessage measures it; over the cap (or not serialisable), its answer.
    if (json !== undefined && utf8Bytes(json) <= PLUGIN_RESULT_MAX_BYTES) {
      return { ok: true, msg: { type: 'result', id: raw.id as string, plugin: raw.plugin as string, ok: true, value: raw.value }, valueJson: json };
    }
  }
  return checkPageMessage(raw);
}
