export { createReceiving, createRouteSchema, receivedListSchema, updateRouteSchema } from './service.ts';
export type { Receiving, Route, ReceivedEnvelope, MessageReaders } from './service.ts';
export type { ReceivingStore, RouteRow, ReceivedRow } from './store.ts';
export { RECEIVING_LIMITS } from './limits.ts';
