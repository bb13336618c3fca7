/**
 * `opentabs approvals`, `opentabs approve <id>`, `opentabs deny [id]`: answer calls waiting for
 * approval from the terminal, as the side panel does (GET /approvals, POST /approvals/:id).
 * `deny` without an id refuses the one waiting call. `approve` always needs the id of the call the
 * user looked at: the agent can cancel its waiting call and make another at any moment, so "the
 * one waiting call" when the command runs may not be the one the user saw; without an id, the
 * waiting calls are listed with the command to allow each.
 */
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, literal, out, plural, printJson, printable, table, say } from '../output.ts';
import { api, resolveTarget, type Target } from '../server-client.ts';

interface Waiting {
  id: string;
  tool: string;
  plugin: string;
  params?: unknown;
  /** GET /approvals leaves out arguments longer than its cap; GET /approvals/:id has them whole. */
  paramsCut?: { chars: number; preview: string; whole: string };
  expiresAt: number;
  target?: { tabId?: number; url?: string; domain?: string; candidateTabs?: { tabId: number; url: string }[] };
}

const LIST_HELP = `Usage: opentabs approvals [--json] [--port N]

List the tool calls waiting for your approval (also shown in the OpenTabs side panel), with the
id to pass to \`opentabs approve <id>\` or \`opentabs deny <id>\`.`;

const decideHelp = (verb: 'approve' | 'deny') =>
  verb === 'approve'
    ? `Usage: opentabs approve <id> [--port N]

Allow the tool call with this id (from \`opentabs approvals\`), as the side panel's Allow does.
Without an id, the waiting calls are listed: the id makes sure the call allowed is the one you
looked at, not one the agent put in its place since.`
    : `Usage: opentabs deny [id] [--port N]

Refuse a tool call that waits for approval, as the side panel's Deny does.
Without an id: the one waiting call (when several wait, they are listed; pass an id).`;

/**
 * The waiting calls, each with its arguments whole: the listing carries a bounded part of long
 * ones, which are read one by one (the user approves what is printed here). A call answered in
 * the meantime is left out: it no longer waits.
 */
async function waiting(t: Target): Promise<Waiting[]> {
  const list = (await api<{ approvals: Waiting[] }>(t, 'GET', '/approvals')).body.approvals;
  const whole: Waiting[] = [];
  for (const w of list) {
    if (!w.paramsCut) {
      whole.push(w);
      continue;
    }
    const r = await api<{ approval?: Waiting }>(t, 'GET', `/approvals/${encodeURIComponent(w.id)}`, { okStatuses: [404] });
    if (r.status === 200 && r.body.approval) whole.push(r.body.approval);
  }
  return whole;
}

/** Characters of a call's arguments shown in the table; longer ones are also printed whole below it. */
const TABLE_ARGS_CHARS = 60;

/**
 * The arguments of the calls whose table cell was cut, whole: the end of a long script or the
 * last of many files is what runs too, and the user approves by id after reading this list.
 */
function wholeArguments(list: Waiting[]): string {
  const cut = list.filter((w) => JSON.stringify(w.params ?? {}).length > TABLE_ARGS_CHARS);
  return cut.map((w) => `\nArguments of ${w.id} (${w.tool}):\n${printable(JSON.stringify(w.params ?? {}, null, 2))}`).join('\n');
}

/**
 * What the call touches, as the side panel's card names it: the tab, the domain as the browser
 * reads it (a URL argument written with look-alike letters, gооgle.com in Cyrillic, is
 * xn--ggle-55da.com; a cookie domain covers its subdomains), the URL, and for a plugin call that
 * names no tab, every tab of the plugin it may run in (another account, another workspace).
 */
function targetOf(t: Waiting['target']): string {
  if (!t) return '';
  const parts: string[] = [];
  if (t.tabId !== undefined) parts.push(`tab ${t.tabId}`);
  if (t.domain !== undefined) parts.push(t.domain);
  if (t.url !== undefined) parts.push(t.url);
  if (t.candidateTabs?.length) parts.push(`one of ${t.candidateTabs.map((c) => `tab ${c.tabId} ${c.url}`).join(', ')}`);
  return parts.join(' ');
}

function describe(w: Waiting): string[] {
  const where = targetOf(w.target);
  const args = JSON.stringify(w.params ?? {});
  return [w.id, w.tool, printable(where), printable(args.length > TABLE_ARGS_CHARS ? `${args.slice(0, TABLE_ARGS_CHARS - 1)}…` : args), `${Math.max(0, Math.round((w.expiresAt - Date.now()) / 1000))} s`];
}

export const approvalsCommand: Command = {
  name: 'approvals',
  summary: 'List calls waiting for approval',
  help: LIST_HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'approvals');
    if (values.help) return (say(LIST_HELP), 0);
    if (positionals.length > 0) throw new CliError(`Unexpected argument "${positionals[0]}". Run \`opentabs approvals --help\`.`, 2);
    const list = await waiting(resolveTarget(values.port, 'approvals'));
    if (values.json) return (printJson(list), 0);
    if (list.length === 0) return (out('No call is waiting for approval.'), 0);
    out(table(list.map(describe), ['ID', 'TOOL', 'TARGET', 'ARGUMENTS', 'EXPIRES IN']));
    const whole = wholeArguments(list);
    if (whole) out(whole);
    return 0;
  },
};

function decideCommand(verb: 'approve' | 'deny'): Command {
  const help = decideHelp(verb);
  return {
    name: verb,
    summary: verb === 'approve' ? 'Allow a call waiting for approval' : 'Refuse a call waiting for approval',
    help,
    async run(argv) {
      const { values, positionals } = parse(argv, { port: { type: 'string' } }, verb);
      if (values.help) return (say(help), 0);
      if (positionals.length > 1) throw new CliError(`Unexpected argument "${positionals[1]}". Run \`opentabs ${verb} --help\`.`, 2);
      const t = resolveTarget(values.port, verb);
      let id = positionals[0];
      if (id === undefined) {
        const list = await waiting(t);
        if (list.length === 0) throw new CliError('No call is waiting for approval.');
        if (list.length > 1 || verb === 'approve') {
          // The arguments are the agent's: shown as they are (literal()), never as the CLI's commands.
          const shown = literal(table(list.map(describe), ['ID', 'TOOL', 'TARGET', 'ARGUMENTS', 'EXPIRES IN']) + wholeArguments(list));
          throw new CliError(
            list.length > 1
              ? `${plural(list.length, 'call')} wait for approval; pass the id of one:\n${shown}\ne.g. \`opentabs ${verb} ${list[0]!.id}\``
              : `1 call waits for approval:\n${shown}\nAllow it with \`opentabs approve ${list[0]!.id}\` (the id makes sure it is this call and not one put in its place).`,
          );
        }
        id = list[0]!.id;
      }
      const r = await api<{ ok?: boolean; error?: { message: string } }>(t, 'POST', `/approvals/${encodeURIComponent(id)}`, {
        body: { decision: verb === 'approve' ? 'allow' : 'deny' },
        okStatuses: [404],
      });
      if (r.status === 404) throw new CliError(r.body.error?.message !== undefined ? literal(r.body.error.message) : `No call is waiting for approval with id "${id}".`);
      out(verb === 'approve' ? `Allowed ${id}.` : `Denied ${id}.`);
      return 0;
    },
  };
}

export const approveCommand = decideCommand('approve');
export const denyCommand = decideCommand('deny');
