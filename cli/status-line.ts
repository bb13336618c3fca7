/**
 * One live status line on stderr while `opentabs tool call` runs: a progress bar, or the approval
 * wait with its elapsed seconds. On a terminal the line is redrawn in place and erased before the
 * result is printed; otherwise (a pipe, a log file) each change is one plain line, and progress
 * is printed only when its percentage moves by PLAIN_PROGRESS_STEP or its message changes.
 */
import { ce, err, isTerminal, literal, printable, stderrStream, terminalText, withoutMarks } from './output.ts';
import type { CallEvent } from './call-stream.ts';

const BAR_WIDTH = 20;
const PLAIN_PROGRESS_STEP = 10;

export class StatusLine {
  // On a terminal the line is drawn in place through process.stderr (writes without a newline);
  // elsewhere it is plain lines through err().
  constructor(private readonly tty: boolean = isTerminal(2)) {}
  private shown = false;
  private ticker: ReturnType<typeof setInterval> | null = null;
  private lastPlain = '';
  private lastPercent = -Infinity;
  private lastMessage: string | undefined;

  update(e: CallEvent): void {
    // A progress message is the page's text: its control characters are shown, not run.
    if (e.type === 'progress') return this.progress(e.progress, e.total, e.message === undefined ? undefined : literal(printable(e.message)));
    if (e.type !== 'approval') return;
    this.stopTicker();
    if (e.state === 'waiting') {
      const started = Date.now();
      const draw = () => this.draw(`${ce.yellow('⏳')} ${e.message} ${ce.dim(`(${Math.round((Date.now() - started) / 1000)} s)`)}`);
      if (!this.tty) return this.plain(literal(e.message));
      // Only on a terminal, where a person reads it: an agent running this command through its
      // shell has no terminal, and must not be handed the command that approves its own call.
      this.plain(`Or allow it from another terminal: \`opentabs approve ${e.id}\` (\`opentabs deny ${e.id}\` to refuse).`);
      draw();
      this.ticker = setInterval(draw, 1000);
      this.ticker.unref?.();
    } else {
      this.plain(e.state === 'approved' ? 'Approved; running …' : 'Denied.');
    }
  }

  private progress(progress: number, total?: number, message?: string): void {
    const pct = total && total > 0 ? Math.max(0, Math.min(100, Math.round((progress / total) * 100))) : null;
    if (pct !== null) {
      const filled = Math.round((pct / 100) * BAR_WIDTH);
      const text = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(pct).padStart(3)}%${message ? ` ${message}` : ''}`;
      if (this.tty) return this.draw(text);
      const moved = pct - this.lastPercent >= PLAIN_PROGRESS_STEP || (pct === 100 && this.lastPercent !== 100);
      if (!moved && message === this.lastMessage) return;
      this.lastPercent = pct;
      this.lastMessage = message;
      return this.plain(text);
    }
    const text = `progress ${progress}${message ? ` ${message}` : ''}`;
    if (this.tty) this.draw(text);
    else this.plain(text);
  }

  private draw(text: string): void {
    // What err() writes elsewhere: the line's own colours, nothing else that a terminal obeys.
    text = terminalText(withoutMarks(text));
    const width = stderrStream().columns ?? 100;
    // Cut to the terminal width so the line never wraps (a wrapped line cannot be redrawn in place).
    stderrStream().write(`\r\x1b[K${text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text}`);
    this.shown = true;
  }

  private plain(text: string): void {
    if (this.tty) {
      this.clear();
      err(text);
      return;
    }
    if (text === this.lastPlain) return;
    this.lastPlain = text;
    err(text);
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  /** Erase the line (before the result is printed). */
  clear(): void {
    this.stopTicker();
    if (this.tty && this.shown) stderrStream().write('\r\x1b[K');
    this.shown = false;
  }
}
