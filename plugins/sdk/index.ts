/**
 * @opentabs/sdk — everything a plugin author imports.
 *
 *   import * as v from 'valibot';
 *   import { definePlugin, defineTool, fetchJson, ToolError } from '@opentabs/sdk';
 *
 * The adapter runtime (./runtime.ts) is added by `opentabs plugin build`; authors never call it.
 */
export { definePlugin, defineTool, isPluginDefinition, CONFIG_FIELD_TYPES } from './define.ts';
export type { ConfigField, ConfigFieldType, ConfigOf, ConfigSchema, LogFn, PluginDefinition, ToolContext, ToolDefinition } from './define.ts';
export { ToolError, isToolError } from './errors.ts';
export type { ToolErrorCategory, ToolErrorOptions } from './errors.ts';
export type { ToolAnnotations } from '../../server/protocol/tool-annotations.ts';
export { fetchJson, fetchText, postJson, putJson, patchJson, deleteJson, request, categoryForStatus, hintForStatus, parseRetryAfter, setDefaultHeaders, csrfToken, csrfHeaders, graphql, fetchBase64, bytesToBase64, base64ToBytes, readEventStream, DEFAULT_FETCH_TIMEOUT_MS } from './http.ts';
export type { DefaultHeaders, EventStreamOptions, FetchOptions, GraphqlError, RetryInfo, ServerSentEvent } from './http.ts';
export {
  waitForSelector,
  waitUntil,
  getPageGlobal,
  getCookie,
  getLocalStorage,
  getLocalStorageJson,
  getSessionStorage,
  getMetaContent,
  DEFAULT_WAIT_TIMEOUT_MS,
} from './page.ts';
export type { WaitOptions } from './page.ts';
export { readWebSocket } from './websocket.ts';
export type { ReadWebSocketOptions, WebSocketMessage } from './websocket.ts';
export { SDK_VERSION } from './version.ts';
