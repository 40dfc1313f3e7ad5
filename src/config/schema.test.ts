import { describe, expect, it } from 'vitest';
import { LIMITS } from '../limits/constants.ts';
import { ConfigError, loadConfig } from './load.ts';

describe('--in-flight-bytes', () => {
  it('is at least the largest request, the HTTP body limit or the message size limit', () => {
    const least = Math.max(LIMITS.httpBodyBytes, LIMITS.messageBytes);
    expect(least).toBe(40 * 1024 ** 2);
    expect(loadConfig({ flags: { inFlightBytes: '40MiB' } }).inFlightBytes).toBe(least);
    for (const below of ['1MiB', '25MiB', String(least - 1)]) {
      expect(() => loadConfig({ flags: { inFlightBytes: below } })).toThrow(ConfigError);
      expect(() => loadConfig({ flags: { inFlightBytes: below } })).toThrow(
        'invalid setting --in-flight-bytes (SVC_IN_FLIGHT_BYTES): at least 40MiB, the largest request body',
      );
    }
  });

  it('reads a size with a binary unit or a number of bytes, and names a malformed one', () => {
    expect(loadConfig({ flags: { inFlightBytes: '1GiB' } }).inFlightBytes).toBe(1024 ** 3);
    expect(loadConfig({ flags: { inFlightBytes: String(64 * 1024 ** 2) } }).inFlightBytes).toBe(64 * 1024 ** 2);
    expect(() => loadConfig({ flags: { inFlightBytes: '64MB' } })).toThrow(/a size such as 256MiB/);
  });
});
