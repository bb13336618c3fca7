/**
 * Unit-testing helpers for plugin authors: run a tool exactly as the page runtime would (input
 * and output validation, ctx, error mapping) without a browser.
 *
 *   const r = await runTool(plugin, 'get_page_info', {});
 *   expect(r.ok).toBe(true);
 */
import type { LogLevel } from '../../server/protocol/methods.ts';
import type { PluginDefinition } from './define.ts';
import { executeTool, type ExecuteOutcome } from './execute.ts';

export interface RunToolOptions {
  config?: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface RunToolResult {
  outcome: ExecuteOutcome;
  progress: { progress: number; total?: number; message?: string }[];
  logs: { level: LogLevel; message: string; data?: unknown }[];
}

export async function runTool(plugin: PluginDefinition, toolName: string, input: unknown, options: RunToolOptions = {}): Promise<RunToolResult> {
  const tool = plugin.tools.find((t) => t.name === toolName);
  if (!tool) throw new Error(`Plugin ${plugin.name} has no tool "${toolName}"`);
  const progress: RunToolResult['progress'] = [];
  const logs: RunToolResult['logs'] = [];
  const defaults = Object.fromEntries(Object.entries(plugin.configSchema ?? {}).filter(([, f]) => f.default !== undefined).map(([k, f]) => [k, f.default]));
  const outcome = await executeTool(plugin.name, tool, input, {
    signal: options.signal ?? new AbortController().signal,
    config: { ...defaults, ...options.config },
    callId: `test-${Math.random().toString(36).slice(2)}`,
    onProgress: (p) => progress.push(p),
    onLog: (level, message, data) => logs.push({ level, message, ...(data !== undefined ? { data } : {}) }),
  });
  return { outcome, progress, logs };
}
