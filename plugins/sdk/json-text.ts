/**
 * JSON.stringify as the SDK needs it in a page whose script has given the built-in prototypes a
 * `toJSON` (older libraries such as Prototype.js define Array.prototype.toJSON, which makes
 * JSON.stringify write every array as a string): those are set aside while the SDK writes a
 * result, a request body or a channel message, and put back at once. The write is synchronous,
 * so no other script of the page runs meanwhile.
 */
const PROTOTYPES: readonly object[] = [Array.prototype, Object.prototype, String.prototype, Number.prototype, Boolean.prototype];

export function jsonText(value: unknown, replacer?: (this: unknown, key: string, value: unknown) => unknown): string | undefined {
  const hidden: [object, PropertyDescriptor][] = [];
  for (const proto of PROTOTYPES) {
    const d = Object.getOwnPropertyDescriptor(proto, 'toJSON');
    if (d?.configurable && delete (proto as { toJSON?: unknown }).toJSON) hidden.push([proto, d]);
  }
  try {
    return JSON.stringify(value, replacer);
  } finally {
    for (const [proto, d] of hidden) Object.defineProperty(proto, 'toJSON', d);
  }
}
