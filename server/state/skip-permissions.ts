/**
 * Whether permission checks are bypassed: OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS=1 (or the
 * `skipPermissions` server option that mirrors it), or the side panel's toggle in config.json.
 */
import type { CoreDeps } from '../deps.ts';

export function skipPermissionsFromEnv(env: Record<string, string | undefined> = process.env): boolean {
  const v = env.OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS?.trim().toLowerCase();
  return v === '1' || v === 'true';
}

export function skipPermissionsEnabled(ctx: Pick<CoreDeps, 'options' | 'config'>): boolean {
  const fromProcess = ctx.options.skipPermissions ?? skipPermissionsFromEnv();
  return fromProcess || ctx.config.get().skipPermissions === true;
}
