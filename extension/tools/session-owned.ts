/**
 * Who made the changes an agent leaves on a tab beyond its call — browser_emulate's overrides,
 * browser_intercept_requests' rules, browser_force_pseudo_state's forced states — so they end when
 * the agent's MCP session does.
 *
 * A built-in call made in an MCP session carries an id of that session (tool.dispatch `session`);
 * when the session ends (the client closed it, it expired, the server stopped), the server sends
 * session.ended with that id. Each tool keeps, per tab, the sessions that made the tab's changes
 * (Makers): the session's end undoes them when no other session that made changes to that tab is
 * left. A call of no session (REST: `opentabs tool call`) made changes that stay until reset, the
 * tab closing or the extension losing the server, as before: a tab with such changes is never
 * undone by a session's end.
 *
 * A call still running when its session ends can make its change after session.ended came: the
 * ids of ended sessions are kept (the last ENDED_KEPT), and a change recorded for one is undone
 * at once (endedSession).
 */

/** Ids of ended sessions kept to catch calls that finish after their session's end. */
const ENDED_KEPT = 1024;
const ended = new Set<string>();
const listeners = new Set<(session: string) => void>();

/** session.ended: every tool undoes what only that session made. An id never seen does nothing. */
export function sessionEnded(session: string): void {
  if (ended.has(session)) return;
  ended.add(session);
  if (ended.size > ENDED_KEPT) ended.delete(ended.values().next().value!);
  for (const cb of listeners) {
    try {
      cb(session);
    } catch {}
  }
}

/** Whether `session` has ended (a change a call of it just made must be undone). */
export function endedSession(session: string | undefined): session is string {
  return session !== undefined && ended.has(session);
}

export function onSessionEnded(cb: (session: string) => void): void {
  listeners.add(cb);
}

/** The makers of one tab's changes of one kind. */
export class Makers {
  private sessions = new Set<string>();
  /** A call of no session (REST) made some of them: a session's end never undoes them. */
  private sessionless = false;

  /** A call made (part of) the changes; `session` undefined for a call of no session. */
  add(session: string | undefined): void {
    if (session === undefined) this.sessionless = true;
    else this.sessions.add(session);
  }

  /** `session` ended: true when it made the changes and no one else who did is left (undo them). */
  drop(session: string): boolean {
    if (!this.sessions.delete(session)) return false;
    return this.sessions.size === 0 && !this.sessionless;
  }
}
