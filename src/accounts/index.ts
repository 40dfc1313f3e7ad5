export { createAccountsRepo } from './repo.ts';
export type * from './store.ts';
export { createAccountsService, toProject, type AccountsService, type Organization, type Project } from './service.ts';
export { ROLES, type Role, type ProjectSettings } from './schema.ts';
export { hasRole, minRoleOf, MIN_ROLE } from './roles.ts';
export { initialize, initializeFirstStart, type InitInput, type InitResult } from './bootstrap.ts';
export { createMembersService, type MembersService } from './members.ts';
export { emailAddress } from './schema.ts';
export { auditChange, type ChangeTarget } from './audit-change.ts';
