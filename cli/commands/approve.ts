/**
 * `opentabs approvals`, `opentabs approve [id]`, `opentabs deny [id]`: answer calls waiting for
 * approval from the terminal, as the side panel does (GET /approvals, POST /approvals/:id).
 * Without an id, the one waiting call is answered; with several waiting, they are listed.
 */
import { parse } from '../args.ts';
import type { Command } from '../command.ts';
import { CliError, out, plural, printJson, printable, table } from '../output.ts';
import { api, resolveTarget, type Target } from '../server-client.ts';

interface Waiting {
  id: string;
  tool: string;
  plugin: string;
  params: unknown;
  expiresAt: number;
  target?: { tabId?: number; url?: string; domain?: string };
}

const LIST_HELP = `Usage: opentabs approvals [--json] [--port N]

List the tool calls waiting for your approval (also shown in the OpenTabs side panel), with the
id to pass to \`opentabs approve <id>\` or \`opentabs deny <id>\`.`;

const decideHelp = (verb: 'approve' | 'deny') => `Usage: opentabs ${verb} [id] [--port N]

${verb === 'approve' ? 'Allow' : 'Refuse'} a tool call that waits for approval, as the side panel's ${verb === 'approve' ? 'Allow' : 'Deny'} does.
Without an id: the one waiting call (when several wait, they are listed; pass an id).`;

async function waiting(t: Target): Promise<Waiting[]> {
  return (await api<{ approvals: Waiting[] }>(t, 'GET', '/approvals')).body.approvals;
}

function describe(w: Waiting): string[] {
  const where = w.target?.url ?? w.target?.domain ?? (w.target?.tabId !== undefined ? `tab ${w.target.tabId}` : '');
  const args = JSON.stringify(w.params ?? {});
  return [w.id, w.tool, printable(where), printable(args.length > 60 ? `${args.slice(0, 59)}…` : args), `${Math.max(0, Math.round((w.expiresAt - Date.now()) / 1000))} s`];
}

export const approvalsCommand: Command = {
  name: 'approvals',
  summary: 'List calls waiting for approval',
  help: LIST_HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, port: { type: 'string' } }, 'approvals');
    if (values.help) return (out(LIST_HELP), 0);
    if (positionals.length > 0) throw new CliError(`Unexpected argument "${positionals[0]}". Run \`opentabs approvals --help\`.`, 2);
    const list = await waiting(resolveTarget(values.port, 'approvals'));
    if (values.json) return (printJson(list), 0);
    if (list.length === 0) return (out('No call is waiting for approval.'), 0);
    out(table(list.map(describe), ['ID', 'TOOL', 'TARGET', 'ARGUMENTS', 'EXPIRES IN']));
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
      if (values.help) return (out(help), 0);
      if (positionals.length > 1) throw new CliError(`Unexpected argument "${positionals[1]}". Run \`opentabs ${verb} --help\`.`, 2);
      const t = resolveTarget(values.port, verb);
      let id = positionals[0];
      if (id === undefined) {
        const list = await waiting(t);
        if (list.length === 0) throw new CliError('No call is waiting for approval.');
        if (list.length > 1) {
          throw new CliError(`${plural(list.length, 'call')} wait for approval; pass the id of one:\n${table(list.map(describe), ['ID', 'TOOL', 'TARGET', 'ARGUMENTS', 'EXPIRES IN'])}\ne.g. \`opentabs ${verb} ${list[0]!.id}\``);
        }
        id = list[0]!.id;
      }
      const r = await api<{ ok?: boolean; error?: { message: string } }>(t, 'POST', `/approvals/${encodeURIComponent(id)}`, {
        body: { decision: verb === 'approve' ? 'allow' : 'deny' },
        okStatuses: [404],
      });
      if (r.status === 404) throw new CliError(r.body.error?.message ?? `No call is waiting for approval with id "${id}".`);
      out(verb === 'approve' ? `Allowed ${id}.` : `Denied ${id}.`);
      return 0;
    },
  };
}

export const approveCommand = decideCommand('approve');
export const denyCommand = decideCommand('deny');
