// The floor of bench:webhooks: a bare undici client in its own process POSTing a
// pre-signed ~1.3 KB event body to the same HTTPS receiver, 128 requests in flight
// (the dispatcher's concurrency), for a given time after a second of warmup. No database, no outbox: what
// this machine can POST at all. Prints {"posted": N, "seconds": S}.
//   NODE_EXTRA_CA_CERTS=<ca.pem> node --import tsx bench/webhooks-floor.ts <url> <seconds>
import { Agent } from 'undici';
import { postSigned } from '../src/webhooks/send.ts';

const [url, secondsArg] = process.argv.slice(2);
// The receiver's CA comes as svc's does, through NODE_EXTRA_CA_CERTS: a `ca` option
// would build a new trust store for every connection (~10 ms each).
const agent = new Agent();
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
      // svc's own POST (undici's dispatch with a minimal handler, signed per request), minus svc.
      const out = await postSigned(agent, url!, 'whsec_' + '0'.repeat(64), 'evt_floor', body, Date.now());
      if (out.ok && performance.now() >= started) posted++;
    }
  }),
);
console.log(JSON.stringify({ posted, seconds: (performance.now() - started) / 1000 }));
await agent.close();
