/**
 * What ties a plugin's dist/tools.json to the dist/adapter.js built with it: `opentabs plugin
 * build` ends the adapter with a comment naming a digest of the tools' names and input schemas,
 * and the server checks tools.json against it when loading the folder. A tools.json edited by
 * hand (a tool added or renamed, an input changed) or taken from another build would otherwise
 * load, and its calls fail in the page as an unknown tool or with arguments the adapter refuses.
 */

/** JSON text with every object's keys sorted, so the same schemas give the same text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Digest of the tools' names and input schemas (16 hex digits). */
export function toolsDigest(tools: readonly { name: string; inputSchema: unknown }[]): string {
  return Bun.SHA256.hash(canonical(tools.map((t) => [t.name, t.inputSchema])), 'hex').slice(0, 16);
}

/** The comment the build ends dist/adapter.js with. */
export function toolsDigestComment(digest: string): string {
  return `\n//# opentabsTools=${digest}\n`;
}

/** The digest an adapter was built with, or undefined (an adapter built before there was one). */
export function adapterToolsDigest(adapterSource: string): string | undefined {
  return /\n\/\/# opentabsTools=([0-9a-f]{16})\n?$/.exec(adapterSource.slice(-64))?.[1];
}
