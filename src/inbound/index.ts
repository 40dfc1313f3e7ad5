export { createInboundService, type InboundService, type InboundResult } from './service.ts';
export { readReport, parseDeliveryStatus, type InboundReport, type DsnRecipient } from './report.ts';
export { createDmarcReports, serverAddresses, type DmarcReports, type ReportReceipt } from './dmarc-service.ts';
export { REPORT_DAYS_DEFAULT, REPORT_DAYS_MAX } from './dmarc-service.ts';
export type { ReportDay } from './dmarc.ts';
export { createDmarcRepo } from './dmarc-repo.ts';
export { createPgDmarcRepo } from './dmarc-repo-pg.ts';
export type { DmarcRepo } from './dmarc-store.ts';
export { reportDaysQuerySchema, reportDayOut } from './dmarc-schema.ts';
