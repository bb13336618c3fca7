/**
 * A debugger session held open across calls (debugger.ts detaches an idle tab after a few
 * seconds, which would end what the session keeps: forced pseudo states, a running performance
 * trace, emulation overrides, request interception, network capture). `hold` returns the tab's send function until `release`; the session also ends when the
 * debugger leaves the tab (closed, detached by the user, refused page), and `onGone` says so.
 */
import { onDebuggerGone } from './cdp-events.ts';
import { withDebugger, type CdpSend } from './debugger.ts';

export interface Held {
  send: CdpSend;
  /** Let the session go (detached after the usual idle time if nothing else uses it). */
  release(): void;
  /** Settles once the held session has been let go (by release or because the debugger left). */
  released: Promise<void>;
}

/** Hold the tab's debugger session; `onGone` runs if the debugger leaves the tab first. */
export async function holdDebugger(tabId: number, onGone: (reason: string) => void): Promise<Held> {
  let let_go!: () => void;
  const until = new Promise<void>((r) => (let_go = r));
  let released!: Promise<void>;
  const send = await new Promise<CdpSend>((resolve, reject) => {
    released = withDebugger(tabId, (s) => {
      resolve(s);
      return until;
    }).then(() => {}, reject);
  });
  let done = false;
  const off = onDebuggerGone(tabId, (reason) => {
    if (done) return;
    done = true;
    off();
    let_go();
    onGone(reason);
  });
  return {
    send,
    released,
    release() {
      if (done) return;
      done = true;
      off();
      let_go();
    },
  };
}
