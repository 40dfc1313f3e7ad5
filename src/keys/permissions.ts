import { AppError } from '../errors.ts';
import type { Permission } from './schema.ts';

export type Access = 'send' | 'read';

/** Contract, Authentication 5: who may send and who may read. */
const ALLOWED: Record<Permission, readonly Access[]> = {
  FULL_ACCESS: ['send', 'read'],
  SENDING_ONLY: ['send'],
  READ_ONLY: ['read'],
};

/** Throws 403 forbidden when `permission` does not cover `access`; the key stays valid (Authentication 6). */
export function assertAllowed(permission: Permission, access: Access): void {
  if (!ALLOWED[permission].includes(access)) {
    throw new AppError('forbidden', `This key's permission ${permission} does not allow this`);
  }
}
