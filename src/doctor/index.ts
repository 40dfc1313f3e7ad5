export { createDoctor, PROBE_DOMAIN, type Doctor, type DoctorDeps } from './run.ts';
export { createDoctorDns, type DoctorDns } from './dns.ts';
export { startDoctorMonitor, DOCTOR_INTERVAL_MS, type DoctorMonitor } from './monitor.ts';
export type { CheckStatus, DoctorCheck, DoctorReport } from './check.ts';
export type { Connect } from './port25.ts';
export { localOutboundAddresses } from './outbound.ts';
