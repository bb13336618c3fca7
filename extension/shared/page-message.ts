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
 * be megabytes: the bridge skips it when the page's whole message text cannot be over the cap
 * once parsed and serialised again (`textWithin`, textWithinResultCap; the worker measures
 * exactly), and the worker keeps the text it measured (checkPageMessageJson) to put in its frame
 * to the server, or the refusal it made from that count.
 */
import { resultTooLarge, sanitizePageMessage, utf8Bytes, type PageToBridge } from '../../server/protocol/page-channel.ts';
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

/**
 * The most a number grows by when its JSON text is parsed and serialised again: `1e20` (4
 * characters) is written `100000000000000000000` (21). Only a number with an exponent grows (one
 * without writes all its digits already), and its text holds a digit followed by `e` or `E`.
 */
export const EXPONENT_GROWTH = 17;

/**
 * Whether a message's JSON text, parsed and serialised again (as the Port does with the message
 * the bridge posts), is within PLUGIN_RESULT_MAX_BYTES as UTF-8. The text itself may be smaller
 * than what it becomes: each number with an exponent may grow by EXPONENT_GROWTH characters, and a
 * lone surrogate (3 bytes as UTF-8) is written as a 6-character escape. So the bound is the text's
 * bytes plus EXPONENT_GROWTH for each place a digit is followed by an `e` (counted only while the
 * bound can stay within the cap); a text holding a lone surrogate is not taken on its word at all.
 */
export function textWithinResultCap(text: string): boolean {
  if (text.length > PLUGIN_RESULT_MAX_BYTES || !wellFormed(text)) return false;
  const exponent = /\d[eE]/g;
  if (!exponent.test(text)) return text.length * 3 <= PLUGIN_RESULT_MAX_BYTES || utf8Bytes(text) <= PLUGIN_RESULT_MAX_BYTES;
  let bound = utf8Bytes(text) + EXPONENT_GROWTH;
  while (bound <= PLUGIN_RESULT_MAX_BYTES && exponent.test(text)) bound += EXPONENT_GROWTH;
  return bound <= PLUGIN_RESULT_MAX_BYTES;
}

/** Whether `s` holds no lone surrogate (String.prototype.isWellFormed where there is one). */
function wellFormed(s: string): boolean {
  const own = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return typeof own === 'function' ? own.call(s) : !/[\ud800-\udfff]/.test(s);
}

/**
 * The message checked and capped. `textWithin`: it arrived as JSON text that is at most
 * PLUGIN_RESULT_MAX_BYTES bytes once serialised again (textWithinResultCap), so an ok result's
 * value is taken without serialising it to measure; whoever passes it on measures it exactly (the
 * worker does).
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
    // As sanitizePageMessage measures it, and over the cap its error, from the same count.
    if (json !== undefined) {
      const bytes = utf8Bytes(json);
      if (bytes > PLUGIN_RESULT_MAX_BYTES) return { ok: true, msg: resultTooLarge(raw.id as string, raw.plugin as string, bytes) };
      return { ok: true, msg: { type: 'result', id: raw.id as string, plugin: raw.plugin as string, ok: true, value: raw.value }, valueJson: json };
    }
  }
  return checkPageMessage(raw);
}
