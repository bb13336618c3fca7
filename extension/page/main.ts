/**
 * Entry of page-lib.js: puts the page library on the ISOLATED world's globalThis under
 * PAGE_LIB_KEY, a name that carries this build's version and content hash (extension/build.ts). After
 * an extension reload a document's isolated world can still hold an older build's library under
 * its own name; the worker of this build never calls that one.
 */
import { pageLib } from './index.ts';

declare const __OPENTABS_PAGE_LIB_KEY__: string;

const holder = globalThis as unknown as Record<string, unknown>;
// Injected again into a document that has it (a restarted worker forgot which do): kept as is.
holder[__OPENTABS_PAGE_LIB_KEY__] ??= pageLib;
