import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './load.ts';
import { configSchema } from './schema.ts';
import { SETTINGS } from './settings.ts';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      dataDir: './svc-data',
      httpHost: '127.0.0.1',
      httpPort: 8080,
      smtpPort: 2587,
    });
    // The MX port has no default in the config: the server's is 25, an admin command's the server's.
    expect(c.mxPort).toBeUndefined();
    expect(c.deliveryRetrySchedule).toEqual([60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000]);
    expect(c.deliveryMaxAge).toBe(72 * 3_600_000);
  });

  it('lets flags beat env and env beat the file', () => {
    const file = configFile({ httpPort: 1000, smtpPort: 1001, mxPort: 1002 });
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

  it('names an unknown key of the config file as a key of that file, not as a flag', () => {
    const file = configFile({ htpPort: 1 });
    expect(() => loadConfig({ file })).toThrow(ConfigError);
    expect(() => loadConfig({ file })).toThrow(`unknown key "htpPort" in config file ${file}`);
    expect(() => loadConfig({ file })).not.toThrow(/--htp/);
  });

  it('reads every setting in its flag, snake_case and camelCase spellings', () => {
    const c = loadConfig({
      file: configFile({ 'http-port': 1000, smtp_port: 1001, mxPort: 1002, 'smtp-tls-insecure': true }),
    });
    expect([c.httpPort, c.smtpPort, c.mxPort, c.smtpTlsInsecure]).toEqual([1000, 1001, 1002, true]);
    const all = Object.fromEntries(
      SETTINGS.map((s) => [s.key.replace(/[A-Z]/g, (x) => '_' + x.toLowerCase()), s.example]),
    );
    expect(() => loadConfig({ file: configFile(all) })).not.toThrow();
  });

  it('refuses one setting given twice in the file', () => {
    const file = configFile({ 'http-port': 1, httpPort: 2 });
    expect(() => loadConfig({ file })).toThrow(/gives "http-port" twice, as "http-port" and "httpPort"/);
  });

  it('names a bad value from the file by its key there and the file', () => {
    const file = configFile({ http_port: 'eighty' });
    expect(() => loadConfig({ file })).toThrow(`invalid setting "http_port" in config file ${file}`);
  });

  it('documents every setting of the schema, and only those', () => {
    expect(SETTINGS.map((s) => s.key).sort()).toEqual(Object.keys(configSchema.shape).sort());
    expect(new Set(SETTINGS.map((s) => s.key)).size).toBe(SETTINGS.length);
  });
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function configFile(object: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
  dirs.push(dir);
  const file = join(dir, 'svc.json');
  writeFileSync(file, JSON.stringify(object));
  return file;
}
