import { describe, expect, it } from 'vitest';
import { effectiveSettings } from './server-settings.ts';

const config = { hostname: 'mta.example.com', dnsServers: undefined, allowInsecureWebhooks: false };
const recorded = { mxPort: 2525, relayHost: 'smarthost.example.net', allowInsecureWebhooks: true };

describe('effectiveSettings', () => {
  it('gives the server its own MX port (25 unless set) and relay host, never a recorded one', () => {
    expect(effectiveSettings({ ...config, mxPort: undefined, relay: undefined }, recorded, false)).toMatchObject({
      mxPort: 25,
      relayHost: null,
      allowInsecureWebhooks: false,
    });
    const relayed = { ...config, mxPort: 26, relay: 'smtps://user:secret@relay.example.net:465' };
    // The relay's host only: its credentials are never recorded.
    expect(effectiveSettings(relayed, {}, false)).toMatchObject({ mxPort: 26, relayHost: 'relay.example.net' });
  });

  it('gives an admin command the recorded MX port and relay host, unless given its own', () => {
    expect(effectiveSettings({ ...config, mxPort: undefined, relay: undefined }, recorded, true)).toMatchObject({
      mxPort: 2525,
      relayHost: 'smarthost.example.net',
      allowInsecureWebhooks: true,
    });
    expect(effectiveSettings({ ...config, mxPort: 2626, relay: undefined }, recorded, true).mxPort).toBe(2626);
  });
});
