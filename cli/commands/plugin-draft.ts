/**
 * `opentabs plugin create <name> --from-capture <file | tab:<id>>`: a plugin project drafted from
 * recorded traffic — a capture file (what browser_get_network_requests returns, or a HAR), or the
 * capture running in a tab of the browser now (read through the running server).
 */
import { readFileSync } from 'node:fs';
import { CliError, out } from '../output.ts';
import { api, resolveTarget } from '../server-client.ts';
import { withConfigDir } from './plugin.ts';

export async function draftFromCapture(name: string, dir: string, source: string, port: string | undefined): Promise<number> {
  const { parseCapture } = await import('../../plugins/tooling/draft/capture.ts');
  const { draftPlugin } = await import('../../plugins/tooling/draft/generate.ts');
  let data: unknown;
  const tab = /^tab:(\d+)$/.exec(source);
  if (tab) {
    const t = resolveTarget(port, 'plugin create');
    const r = await api<{ result?: unknown; error?: { message: string } }>(t, 'POST', '/tools/browser_get_network_requests/call', {
      body: { arguments: { tabId: Number(tab[1]), includeBodies: true } },
      okStatuses: [400, 403, 404, 409, 502, 503, 504],
    });
    if (r.status >= 400) throw new CliError(`Could not read the capture of tab ${tab[1]}: ${r.body.error?.message ?? `HTTP ${r.status}`}`);
    data = r.body.result;
  } else {
    try {
      data = JSON.parse(readFileSync(source, 'utf8'));
    } catch (e) {
      throw new CliError(`Cannot read the capture ${source}: ${(e as Error).message}`);
    }
  }
  let r;
  try {
    r = await draftPlugin(name, parseCapture(data), { dir });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  out(`Drafted plugin "${name}" in ${r.dir} from ${r.origin}: ${r.tools.length} tool${r.tools.length === 1 ? '' : 's'}`);
  for (const t of r.tools) out(`  ${t.name}  ${t.method} ${t.path}  (${t.calls} call${t.calls === 1 ? '' : 's'})`);
  if (r.csrf) out(`CSRF: writes send ${r.csrf.header}${r.csrf.cookie ? ` from the ${r.csrf.cookie} cookie` : ' from the page'}.`);
  out(`Read ${r.dir}/DRAFT.md, then: ${withConfigDir(r.next)}`);
  return 0;
}
