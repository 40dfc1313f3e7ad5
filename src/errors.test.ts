import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorRegistry } from './errors.ts';

// The contract's error table, read from the repository's word-for-word copy of the specification.
function contractCodes(): [string, number][] {
  const spec = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
  const section = spec.slice(spec.indexOf('Error codes:'), spec.indexOf('## Limits'));
  return [...section.matchAll(/^\| ([a-z_]+) \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]);
}

describe('error code registry', () => {
  it('holds every code of the contract with its HTTP status', () => {
    const codes = contractCodes();
    expect(codes.length).toBeGreaterThanOrEqual(11);
    for (const [code, status] of codes) {
      expect(errorRegistry, code).toHaveProperty(code);
      expect(errorRegistry[code as keyof typeof errorRegistry].status, code).toBe(status);
    }
  });

  it('gives every code a client status, an SMTP reply and a message', () => {
    for (const [code, spec] of Object.entries(errorRegistry)) {
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.smtp[0], code).toBeGreaterThanOrEqual(400);
      expect(spec.smtp[1], code).toMatch(/^[45]\.\d+\.\d+$/);
      expect(String(spec.smtp[0])[0], code).toBe(spec.smtp[1][0]);
      expect(spec.message.length, code).toBeGreaterThan(0);
    }
  });

  it('uses the statuses decisions.md gives the codes it adds', () => {
    const decided: Record<string, number> = {
      monthly_volume_exceeded: 429,
      daily_limit_exceeded: 429,
      invalid_json: 400,
      payload_too_large: 413,
      method_not_allowed: 405,
      idempotency_key_reused: 422,
      idempotency_in_progress: 409,
      invalid_attachment: 400,
      attachment_too_large: 422,
      message_too_large: 422,
      invalid_header_value: 400,
      dpa_not_signed: 422,
      trial_restricted: 422,
      rate_limited: 429,
    };
    for (const [code, status] of Object.entries(decided)) {
      expect(errorRegistry[code as keyof typeof errorRegistry].status, code).toBe(status);
    }
  });
});
