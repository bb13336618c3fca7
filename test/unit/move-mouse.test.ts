/**
 * moveMouse (extension/tools/acting.ts): a mouse move is followed by a release of no button, sent
 * before the move is answered. Chrome answers a lone move only at the page's next frame, which a
 * tab the user is not looking at does not draw (a headed Chrome waited ≈ 5 s per move); the button
 * event is handed over at once and takes the move with it. The page-side effects (none besides
 * the move) are checked in Chromium by test/e2e/tools-pointer.test.ts.
 */
import { expect, test } from 'bun:test';
import { moveMouse } from '../../extension/tools/acting.ts';
import type { CdpSend } from '../../extension/tools/debugger.ts';

test('the move and the no-button release go out together, at the same point, before either is answered', async () => {
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  const answers: (() => void)[] = [];
  // Like Chrome for a page that draws no frames: nothing is answered until the test says so.
  const send = ((method: string, params: Record<string, unknown>) => {
    sent.push({ method, params });
    return new Promise<void>((resolve) => answers.push(resolve));
  }) as unknown as CdpSend;
  let done = false;
  const moving = moveMouse(send, { x: 12, y: 34, modifiers: 8 }).then(() => (done = true));
  await Promise.resolve();
  expect(sent).toEqual([
    { method: 'Input.dispatchMouseEvent', params: { type: 'mouseMoved', x: 12, y: 34, modifiers: 8 } },
    { method: 'Input.dispatchMouseEvent', params: { type: 'mouseReleased', x: 12, y: 34, modifiers: 8, button: 'none', clickCount: 0 } },
  ]);
  answers[1]!();
  await Promise.resolve();
  expect(done).toBe(false); // answered when the move is
  answers[0]!();
  await moving;
  expect(done).toBe(true);
});

test('a move with a button held (a drag) keeps it held: the release names no button and carries the held set', async () => {
  const sent: Record<string, unknown>[] = [];
  const send = ((_m: string, params: Record<string, unknown>) => (sent.push(params), Promise.resolve())) as unknown as CdpSend;
  await moveMouse(send, { x: 1, y: 2, button: 'left', buttons: 1 });
  expect(sent).toEqual([
    { type: 'mouseMoved', x: 1, y: 2, button: 'left', buttons: 1 },
    { type: 'mouseReleased', x: 1, y: 2, button: 'none', buttons: 1, clickCount: 0 },
  ]);
});
