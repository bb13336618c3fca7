/**
 * What an unknown tool name probably meant, for the unknown_tool error an agent (MCP, REST) and a
 * user (`opentabs tool call`, `tool schema`) get. Agents often call the names other browser MCP
 * servers use (`browser_click`, `browser_take_screenshot`, `browser_navigate`), and people mistype
 * or leave out a plugin's prefix: a list to read again costs more than one line naming the tool.
 */

/** Levenshtein distance, or Infinity when the lengths alone differ by more than 3. */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Words of a tool name that say nothing about what it does. */
const GENERIC_WORDS = new Set(['browser', 'extension', 'plugin', 'tab', 'tabs', 'page', 'get', 'take', 'do', 'run', 'the', 'a']);

const firstWord = (name: string) => name.toLowerCase().split('_', 1)[0];

/** The words of a name after its first (the plugin's name, or browser_), once each. */
const words = (name: string) => [...new Set(name.toLowerCase().split(/[_.\s]+/).slice(1).filter((w) => w && !GENERIC_WORDS.has(w)))];

/** Up to 3 tool names `name` probably meant: a few edits away, or the name's longer forms, or sharing its words under the same prefix. */
export function closeToolNames(name: string, tools: readonly { name: string }[]): string[] {
  const lower = name.toLowerCase();
  const near = tools
    .map((t) => ({ name: t.name, d: distance(lower, t.name.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(name.length / 6)))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .map((x) => x.name);
  if (near.length) return near.slice(0, 3);
  // browser_click → browser_click_at, browser_click_element
  const longer = tools.filter((t) => t.name.toLowerCase().startsWith(`${lower}_`)).map((t) => t.name);
  if (longer.length) return longer.sort().slice(0, 3);
  // browser_take_screenshot → browser_screenshot_tab: the tools of the same prefix (browser_, a
  // plugin's) sharing the most meaningful words.
  const want = new Set(words(name));
  if (!want.size) return [];
  const prefix = firstWord(name);
  let best = 0;
  let hits: string[] = [];
  for (const t of tools) {
    if (firstWord(t.name) !== prefix) continue;
    const shared = words(t.name).filter((w) => want.has(w)).length;
    if (shared > best) [best, hits] = [shared, [t.name]];
    else if (shared === best && shared > 0) hits.push(t.name);
  }
  return hits.length <= 3 ? hits.sort() : [];
}

/**
 * " Did you mean `x`?" for a close name, else the tools of the plugin the name starts with, else
 * why the plugin it names is not there (failed to load, or no such plugin); "" when nothing fits.
 */
export function suggestTools(
  name: string,
  tools: readonly { name: string; plugin?: string }[],
  failed: readonly { name?: string; path: string; error: string }[] = [],
): string {
  const close = closeToolNames(name, tools).map((n) => `\`${n}\``);
  if (close.length) return ` Did you mean ${close.join(' or ')}?`;
  // The tool's own name without its plugin's prefix.
  const suffixed = tools.filter((t) => t.plugin && t.name === `${t.plugin}_${name}`).map((t) => `\`${t.name}\``);
  if (suffixed.length) return ` Did you mean ${suffixed.slice(0, 3).join(' or ')}? Plugin tools are named <plugin>_<tool>.`;
  const plugins = [...new Set(tools.map((t) => t.plugin ?? '').filter((p) => p && p !== 'browser'))].sort((a, b) => b.length - a.length);
  const plugin = plugins.find((p) => name.startsWith(`${p}_`));
  if (plugin) {
    const own = tools.filter((t) => t.plugin === plugin).map((t) => t.name);
    return ` Plugin ${plugin} has ${own.length === 1 ? 'one tool' : `${own.length} tools`}: ${own.slice(0, 10).join(', ')}${own.length > 10 ? ', …' : ''} (a tool added since its last build needs \`opentabs plugin build\`).`;
  }
  const prefix = /^([a-z0-9][a-z0-9-]*)_/.exec(name)?.[1];
  const broken = failed.find((f) => f.name !== undefined && name.startsWith(`${f.name}_`));
  if (broken) {
    return ` Plugin ${broken.name} failed to load from ${broken.path}: ${broken.error}. Build it (\`opentabs plugin build ${broken.path}\`), then call again.`;
  }
  if (prefix && !/^(browser|extension|plugin|opentabs|tab\d+)$/.test(prefix)) {
    return (
      ` No loaded plugin is named "${prefix}" (loaded: ${plugins.length ? plugins.sort().join(', ') : 'none'}; see \`opentabs plugin list\`).` +
      ` A plugin you wrote loads once built and added: \`opentabs plugin add <folder>\`.`
    );
  }
  return '';
}
