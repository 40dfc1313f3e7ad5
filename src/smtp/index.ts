export {
  createSmtpRelay,
  RELAY_DEFAULTS,
  RELAY_USERNAME,
  isLoopback,
  type RelayOptions,
  type SmtpRelay,
} from './relay.ts';
export { createInboundListener, INBOUND_MAX_BYTES, type InboundListener, type InboundOptions } from './inbound.ts';
