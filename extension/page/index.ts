/**
 * The page library: every function the built-in tools run in a tab's documents. Bundled alone as
 * page-lib.js (main.ts) and injected once per document into the extension's ISOLATED world, where
 * the page's scripts cannot see or change it; the worker then calls these by name through a small
 * stub (extension/tools/page-run.ts), so a call with new arguments compiles only the stub.
 */
import { dragPoints, fillInPage, hitAt, locate, markInPage, scrollInPage, selectInPage } from './acting.ts';
import { hideForeignUi, showForeignUi } from './foreign-ui.ts';
import { coverOfFrame, focusedFrame, frameKeyInParent, frameSlots, iframeBox, unreachableFrames } from './frames.ts';
import { auditInPage, cancelWaitInPage, elementBox, queryPage, readPage, readStorage, stylesInPage, waitInPage } from './reading.ts';
import { snapshotPage } from './snapshot.ts';

export const pageLib = {
  locate,
  selectInPage,
  scrollInPage,
  hitAt,
  dragPoints,
  fillInPage,
  markInPage,
  readPage,
  queryPage,
  waitInPage,
  cancelWaitInPage,
  elementBox,
  stylesInPage,
  auditInPage,
  readStorage,
  snapshotPage,
  frameKeyInParent,
  frameSlots,
  iframeBox,
  coverOfFrame,
  unreachableFrames,
  hideForeignUi,
  showForeignUi,
  focusedFrame,
};

export type PageLib = typeof pageLib;
