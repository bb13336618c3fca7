/**
 * Every built-in tool the extension implements, by full name. test/unit/catalog-parity.test.ts
 * checks these names against server/tools/browser-catalog.ts (tools served by the server excluded).
 */
import { actingTools } from './acting.ts';
import { browserDataTools } from './browser-data.ts';
import { consoleTools } from './console.ts';
import { dialogTools } from './dialogs.ts';
import { formTools } from './forms.ts';
import { emulationTools } from './emulation.ts';
import { interceptTools } from './intercept.ts';
import { pageInspectTools } from './page-inspect.ts';
import { pdfTools } from './pdf.ts';
import { perfTraceTools } from './perf-trace.ts';
import { pointerTools } from './pointer.ts';
import { pseudoStateTools } from './pseudo-state.ts';
import { uploadTools } from './upload.ts';
import { waitingTools } from './waiting.ts';
import { extensionTools } from './extension.ts';
import { networkTools } from './network.ts';
import { readingTools } from './reading.ts';
import { storageTools } from './storage.ts';
import { tabTools } from './tabs.ts';
import { windowTools } from './windows.ts';
import type { Handlers } from './types.ts';

export const TOOL_HANDLERS: Handlers = {
  ...tabTools,
  ...windowTools,
  ...readingTools,
  ...pageInspectTools,
  ...actingTools,
  ...dialogTools,
  ...formTools,
  ...emulationTools,
  ...waitingTools,
  ...storageTools,
  ...consoleTools,
  ...networkTools,
  ...interceptTools,
  ...browserDataTools,
  ...extensionTools,
  ...pointerTools,
  ...uploadTools,
  ...pdfTools,
  ...pseudoStateTools,
  ...perfTraceTools,
};
