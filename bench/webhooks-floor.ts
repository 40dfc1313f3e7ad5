// The floor of bench:webhooks: a bare undici client in its own process POSTing a
// pre-signed ~1.3 KB event body to the same HTTPS receiver, 128 requests in flight
// (the dispatcher's concurrency), for a given time after a second of warmup. No database, no outbox: what
// this machine can POST at all. Prints {"posted": N, "seconds": S}.
//   node --import tsx bench/webhooks-floor.ts <url> <ca.pem> <seconds>
import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { sign } from '../src/webhooks/send.ts';

const [url, caFile, secondsArg] = process.argv.slice(2);
const agent = new Agent({ connect: { ca: [...getCACertificates('default'), readFileSync(caFile!, 'utf8')] } });
const body = JSON.stringify({
  id: 'evt_00000000-0000-7000-8000-000000000000',
  type: 'email.simulated',
  created_at: new Date().toISOString().replace('Z', '000Z'),
  data: {
    email: {
      id: '00000000-0000-7000-8000-000000000000',
      from: 'notifications@example.com',
      to: ['alice@example.com', 'bob@example.org', 'carol.smith@example.net'],
      subject: 'Your order #100000 has shipped',
      tags: ['order-shipped'],
      status: 'SIMULATED',
    },
    event: {},
  },
});
// The first second opens the 128 connections (TLS handshakes) and warms the JIT: not counted.
const WARMUP_MS = 1000;
let posted = 0;
const started = performance.now() + WARMUP_MS;
const until = started + Number(secondsArg) * 1000;
await Promise.all(
  Array.from({ length: 128 }, async () => {
    while (performance.now() < until) {
      const res = await request(url!, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Service-Webhook/1.0',
          'x-service-event-id': 'evt_floor',
          // Signed per request, as svc does.
          'x-service-signature': sign('whsec_' + '0'.repeat(64), body, Date.now()),
        },
        body,
      });
      await res.body.dump();
      if (res.statusCode < 300 && performance.now() >= started) posted++;
    }
  }),
);
console.log(JSON.stringify({ posted, seconds: (performance.now() - started) / 1000 }));
await agent.close();
