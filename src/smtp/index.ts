export {
  createSmtpRelay,
  RELAY_DEFAULTS,
  RELAY_USERNAME,
  isLoopback,
  type RelayOptions,
  type SmtpRelay,
} from './relay.ts';
