export type { TlsrptStore, ClaimedReport } from './store.ts';
export { createTlsrptRepo } from './repo.ts';
export { createPgTlsrptRepo } from './repo-pg.ts';
export { createTlsReports, type TlsReports, type TlsReportsDeps } from './service.ts';
export { createReportMailer } from './mail.ts';
export { createReportPoster } from './post.ts';
export { createTxtLookup, parseTlsRptRecords, type Rua } from './record.ts';
export type { CountRow, ObservedTls } from './counts.ts';
export type { ReportRow, DestinationResult } from './schedule.ts';
