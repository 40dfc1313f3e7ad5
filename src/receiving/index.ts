export { createReceiving, receivedListSchema } from './service.ts';
export type { Receiving, ReceivedEnvelope, MessageReaders } from './service.ts';
export { createRouteSchema, updateRouteSchema, type Route } from './routes.ts';
export type { ReceivingStore, RouteRow, ReceivedRow } from './store.ts';
export { RECEIVING_LIMITS } from './limits.ts';
