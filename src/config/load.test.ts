import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load.ts';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      dataDir: './svc-data',
      httpHost: '127.0.0.1',
      httpPort: 8080,
      smtpPort: 2587,
      mxPort: 25,
    });
    expect(c.deliveryRetrySchedule).toEqual([60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000]);
    expect(c.deliveryMaxAge).toBe(72 * 3_600_000);
  });

  it('lets flags beat env and env beat the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    const file = join(dir, 'svc.json');
    writeFileSync(file, JSON.stringify({ httpPort: 1000, smtpPort: 1001, mxPort: 1002 }));
    const c = loadConfig({ file, env: { SVC_SMTP_PORT: '2001', SVC_MX_PORT: '2002' }, flags: { mxPort: '3002' } });
    expect([c.httpPort, c.smtpPort, c.mxPort]).toEqual([1000, 2001, 3002]);
  });

  it.each([
    [{ flags: { httpPort: '70000' } }, /--http-port/],
    [{ env: { SVC_HTTP_PORT: 'eighty' } }, /--http-port \(SVC_HTTP_PORT\)/],
    [{ flags: { deliveryMaxAge: 'forever' } }, /--delivery-max-age/],
    [{ flags: { logLevel: 'loud' } }, /--log-level/],
    [{ flags: { relay: 'http://x' } }, /--relay/],
    [{ flags: { tlsCert: '/x.pem' } }, /--tls-cert\/--tls-key/],
    [{ file: '/nonexistent/svc.json' }, /cannot read config file/],
  ])('refuses a bad setting with one line naming it (%j)', (sources, pattern) => {
    expect(() => loadConfig(sources)).toThrow(ConfigError);
    try {
      loadConfig(sources);
    } catch (e) {
      expect((e as Error).message).toMatch(pattern);
      expect((e as Error).message).not.toContain('\n');
    }
  });

  it('names an unknown key of the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    const file = join(dir, 'svc.json');
    writeFileSync(file, JSON.stringify({ htpPort: 1 }));
    expect(() => loadConfig({ file })).toThrow(/htp-port/);
  });
});
