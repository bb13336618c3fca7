/**
 * Effective permission for a call: the stored one (catalog snapshot, from config.json) with the
 * global skip switch applied. Skipping turns `ask` into `auto`; `off` stays off.
 */
import type { CoreDeps } from '../deps.ts';
import type { Permission } from '../protocol/methods.ts';
import { skipPermissionsEnabled } from '../state/skip-permissions.ts';

export { skipPermissionsEnabled as skipPermissions };

export function effectivePermission(ctx: Pick<CoreDeps, 'options' | 'config'>, stored: Permission): Permission {
  return stored === 'ask' && skipPermissionsEnabled(ctx) ? 'auto' : stored;
}
