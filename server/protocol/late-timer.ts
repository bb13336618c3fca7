/**
 * A timeout that fires late reads what arrived first. A timer that fires more than LATE_TIMER_MS
 * past its time ran late: the process was stopped (the computer slept, SIGSTOP) or its loop was
 * blocked, and the answer it waits for may be waiting, unread, in a socket (after a stop the loop
 * runs its overdue timers before it reads the sockets). The timeout then waits
 * LATE_TIMER_GRACE_MS more, so that an answer that came meanwhile wins.
 */
export const LATE_TIMER_MS = 1_000;
export const LATE_TIMER_GRACE_MS = 1_000;

export interface LateTolerantTimer {
  clear(): void;
}

/** setTimeout(fire, ms), but one that runs late waits LATE_TIMER_GRACE_MS more before `fire`. */
export function lateTolerantTimeout(fire: () => void, ms: number): LateTolerantTimer {
  const due = performance.now() + ms;
  let timer = setTimeout(() => {
    if (performance.now() - due > LATE_TIMER_MS) timer = setTimeout(fire, LATE_TIMER_GRACE_MS);
    else fire();
  }, ms);
  return { clear: () => clearTimeout(timer) };
}
