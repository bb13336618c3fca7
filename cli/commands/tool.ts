/**
 * `opentabs tool list|schema|call` — CLI mode: agents with only a shell use the tools through the
 * server's REST endpoints (GET /tools, POST /tools/:name/call).
 */
import { parse, parsePositiveInt } from '../args.ts';
import { streamToolCall, type CallOutcome } from '../call-stream.ts';
import { StatusLine } from '../status-line.ts';
import { runGroup, type Command } from '../command.ts';
import { CliError, c, err, literal, oneLine, out, printJson, printable, say, table, usageError, withoutMarks } from '../output.ts';
import { api, errorMessage, fetchHealth, resolveTarget, type Target } from '../server-client.ts';
import { staleLocalPlugin } from '../stale-build.ts';
import { shellWord } from '../../server/cli-command.ts';
import { suggestTools } from '../../server/tools/suggest.ts';

export { suggestTools };

const HELP = `Usage: opentabs tool <list|schema|call> …

  opentabs tool list [--plugin P] [--json]         List tools (name, permission, description)
  opentabs tool schema <name>                      Print a tool's input JSON Schema
  opentabs tool call <name> ['<json>'] [--tab-id N] Call a tool; the result is printed as JSON

Every subcommand takes --port N and --help. Calls go to the running server (start it with
\`opentabs start\`), authenticated with the secret from the config dir.`;

const LIST_HELP = `Usage: opentabs tool list [--plugin P] [--json] [--port N]

List the tools the server offers: built-in browser tools (browser_*, extension_*) and plugin tools
(<plugin>_<tool>). Tools whose permission is off are marked [off]; enable them with
\`opentabs config set permission.<plugin>[.<tool>] ask|auto\` or in the side panel.

Options:
  --plugin P   Only tools of plugin P (use "browser" for the built-in tools)
  --json       Print the list as JSON (name, description, plugin, permission, inputSchema)
  --port N     Server port`;

const SCHEMA_HELP = `Usage: opentabs tool schema <name> [--port N]

Print the input JSON Schema of one tool, to build the '<json>' argument of \`opentabs tool call\`.`;

const CALL_HELP = `Usage: opentabs tool call <name> ['<json>'] [--tab-id N] [--port N]

Call a tool with a JSON object of arguments (default {}; "-" reads the JSON from stdin).
The result is printed to stdout as JSON. On a tool error the message goes to stderr and the exit
code is 1.

Options:
  --tab-id N   Run a plugin tool in this tab (it must match the plugin; see \`opentabs status\`).
               For a built-in browser_*/extension_* tool it is the tool's own tabId argument.
  --port N     Server port

Example:
  opentabs tool call browser_list_tabs
  opentabs tool call slack_send_message '{"channel":"C123","text":"hello"}'`;

export interface RestTool {
  name: string;
  description: string;
  plugin: string;
  permission?: string;
  inputSchema?: unknown;
}

export const command: Command = {
  name: 'tool',
  summary: 'Tools',
  help: HELP,
  run: (argv) => runGroup('tool', HELP, { list, schema, call }, argv),
};

export async function fetchTools(t: Target, plugin?: string): Promise<RestTool[]> {
  const q = plugin ? `?plugin=${encodeURIComponent(plugin)}` : '';
  const { body } = await api<unknown>(t, 'GET', `/tools${q}`);
  const tools = Array.isArray(body) ? body : (body as { tools?: unknown })?.tools;
  if (!Array.isArray(tools)) throw new CliError('GET /tools returned an unexpected shape (no tools array).');
  return tools as RestTool[];
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { plugin: { type: 'string' }, json: { type: 'boolean' }, port: { type: 'string' } }, 'tool list');
  if (values.help) return (say(LIST_HELP), 0);
  if (positionals.length > 0) throw usageError(`Unexpected argument "${positionals[0]}".`, 'tool list');
  const t = resolveTarget(values.port, 'tool list');
  const tools = await fetchTools(t, values.plugin);
  if (values.json) {
    printJson(tools);
    return 0;
  }
  if (tools.length === 0) {
    say(values.plugin ? `No tools for plugin "${values.plugin}". Loaded plugins: \`opentabs plugin list\`.` : 'No tools.');
    return 0;
  }
  const rows = tools.map((tool) => [
    tool.name,
    tool.permission === 'off' ? c.dim('[off]') : tool.permission === 'ask' ? c.yellow('[ask]') : c.green(`[${tool.permission ?? '?'}]`),
    // A page's own tools (WebMCP) carry the page's description: escape sequences in it are shown, never sent.
    printable(oneLine(tool.description.replace(/^\[Disabled\]\s*/, ''), 90)),
  ]);
  out(table(rows));
  return 0;
}

async function schema(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { port: { type: 'string' } }, 'tool schema');
  if (values.help) return (say(SCHEMA_HELP), 0);
  const [name, extra] = positionals;
  if (!name) throw usageError('Missing tool name.', 'tool schema');
  if (extra !== undefined) throw usageError(`Unexpected argument "${extra}".`, 'tool schema');
  const t = resolveTarget(values.port, 'tool schema');
  const tools = await fetchTools(t);
  const tool = tools.find((x) => x.name === name);
  if (!tool) {
    const failed = await fetchHealth(t).then((h) => h?.failedPlugins ?? [], () => []);
    throw new CliError(`Unknown tool "${name}".${suggestTools(name, tools, failed)} List tools with \`opentabs tool list\`.`);
  }
  printJson(tool.inputSchema ?? { type: 'object' });
  return 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Parse the '<json>' argument; errors say where the JSON is broken and what was expected. */
export function parseToolArguments(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    throw usageError(
      `Invalid JSON arguments: ${(e as Error).message}. Pass one JSON object in single quotes, e.g. '{"key":"value"}'.`,
      'tool call',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usageError(`Tool arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}.`, 'tool call');
  }
  return value as Record<string, unknown>;
}

async function call(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { 'tab-id': { type: 'string' }, port: { type: 'string' } }, 'tool call');
  if (values.help) return (say(CALL_HELP), 0);
  const [name, rawArgs, extra] = positionals;
  if (!name) throw usageError('Missing tool name.', 'tool call');
  if (extra !== undefined) {
    throw usageError(`Unexpected argument "${extra}". Pass the arguments as ONE JSON object in single quotes.`, 'tool call');
  }
  const args = rawArgs === undefined ? {} : parseToolArguments(rawArgs === '-' ? await readStdin() : rawArgs);
  const tabId = values['tab-id'] !== undefined ? parsePositiveInt(values['tab-id'], '--tab-id', 'tool call') : undefined;
  // Built-in tools take their tab as an argument; plugin tools are routed to a tab by the server.
  let routeTabId = tabId;
  if (tabId !== undefined && /^(browser|extension)_/.test(name)) {
    if (args.tabId !== undefined && args.tabId !== tabId) {
      throw usageError(`--tab-id ${tabId} contradicts "tabId": ${JSON.stringify(args.tabId)} in the arguments; give one.`, 'tool call');
    }
    args.tabId = tabId;
    routeTabId = undefined;
  }
  const t = resolveTarget(values.port, 'tool call');
  const stale = staleLocalPlugin(t.configDir, name);
  if (stale) err(c.yellow(`note: ${stale} changed after its last build, so this call runs the previous build: \`opentabs plugin build ${shellWord(stale)}\` (or \`npm run dev\` there, which rebuilds on every save).`));
  // Streamed, so the wait for an approval or a long tool shows on stderr as it happens.
  const status = new StatusLine();
  let outcome: CallOutcome;
  try {
    outcome = await streamToolCall(t, name, { arguments: args, ...(routeTabId !== undefined ? { tabId: routeTabId } : {}) }, (e) => status.update(e));
  } finally {
    status.clear();
  }
  if (outcome.type === 'error') {
    // The message may be the page's or the web app's own text.
    // Printed as it is (literal()): a backticked `opentabs …` in it is not the CLI's to make runnable.
    let message = literal(toolErrorMessage(outcome.status, { error: outcome.error }));
    if (outcome.error?.code === 'unknown_tool') {
      // A typo in the name (or a plugin not loaded): name the tools it may have meant.
      const failed = await fetchHealth(t).then((h) => h?.failedPlugins ?? [], () => []);
      const hint = await fetchTools(t).then((tools) => suggestTools(name, tools, failed), () => '');
      // The server names what it probably meant already; add only what it did not say. Its
      // suggested commands may be written another way (with OPENTABS_CONFIG_DIR, or the absolute
      // command the server runs from), so compare the text around them.
      const bare = (s: string) => s.replace(/`[^`]*`/g, '``').trim();
      if (hint && !bare(withoutMarks(message)).includes(bare(hint))) message = `${message}${hint}`;
    }
    err(message);
    return 1;
  }
  printJson(resultOf(outcome.images ? { result: outcome.result, images: outcome.images } : { result: outcome.result }));
  return 0;
}

/** The tool's output: the REST body's `result` (or structuredContent), falling back to the body. */
export function resultOf(body: Record<string, unknown> | null): unknown {
  if (body && typeof body === 'object') {
    // Screenshots etc. come as images beside the result; keep them rather than drop them.
    if ('result' in body && Array.isArray(body.images) && body.images.length > 0) return { result: body.result, images: body.images };
    if ('result' in body) return body.result;
    if ('structuredContent' in body && body.structuredContent !== undefined) return body.structuredContent;
  }
  return body;
}

function toolErrorMessage(status: number, body: Record<string, unknown> | null): string {
  if (body && body.isError === true && Array.isArray(body.content)) {
    const text = (body.content as Array<{ type?: string; text?: string }>).filter((x) => x.type === 'text').map((x) => x.text).join('\n');
    if (text) return text;
  }
  const path = (body as { error?: { path?: unknown } } | null)?.error?.path;
  const msg = errorMessage(status, body);
  return typeof path === 'string' && path !== '/' && !msg.includes(path) ? `${msg} at ${path}` : msg;
}
