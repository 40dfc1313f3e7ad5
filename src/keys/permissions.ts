import { AppError } from '../errors.ts';
import type { Permission } from './schema.ts';

export type Access = 'send' | 'read';

/** Contract, Authentication 5: who may send and who may read. */
const ALLOWED: Record<Permission, readonly Access[]> = {
  FULL_ACCESS: ['send', 'read'],
  SENDING_ONLY: ['send'],
  READ_ONLY: ['read'],
};

/** Whether `permission` covers `access`. */
export function allows(permission: Permission, access: Access): boolean {
  return ALLOWED[permission].includes(access);
}

/** Throws 403 forbidden when `permission` does not cover `access`; the key stays valid (Authentication 6). */
export function assertAllowed(permission: Permission, access: Access): void {
  if (!allows(permission, access)) {
    throw new AppError('forbidden', `This key's permission ${permission} does not allow this`);
  }
}
