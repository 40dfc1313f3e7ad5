export { createInboundService, type InboundService, type InboundResult } from './service.ts';
export { readReport, parseDeliveryStatus, type InboundReport, type DsnRecipient } from './report.ts';
