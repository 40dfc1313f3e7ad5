export { createEmailsRepo } from './repo.ts';
export type { EmailsStore, SendResponse } from './store.ts';
export { createEmailsService, type EmailsService } from './service.ts';
export { projectSender, type Sender } from './ports.ts';
export {
  sendRequestSchema,
  batchRequestSchema,
  listQuerySchema,
  rawSendSchema,
  EMAIL_STATUSES,
  EVENT_TYPES,
  isEmailAddress,
  isMimeType,
  type EmailStatus,
} from './schema.ts';
export { isReservedHeader } from './content.ts';
export { listedHeaders, messageIdOf, type Envelope } from './header-fields.ts';
export { AS_WRITTEN } from './raw-view.ts';
/** The readers of messages as written (libmime, ~100 ms to load): loaded when first needed. */
export const loadRawReader = () => import('./raw-request.ts');
export * as outputSchemas from './schema-out.ts';
export { createEmailsExport, dashboardListQuerySchema, CSV_COLUMNS, type EmailsExport } from './export.ts';
export { createRetention } from './retention.ts';
export { rescheduleSchema, scheduleViewSchema } from './scheduling.ts';
