import { describe, expect, it } from 'vitest';
import { hostnameProblem } from './hostname.ts';

describe('hostnameProblem', () => {
  it.each(['mta.example.com', 'mail.svc.test', 'a.b.example.co.uk'])('accepts %s', (name) => {
    expect(hostnameProblem(name)).toBeNull();
  });

  it.each(['vm', 'localhost', 'vm.localdomain', 'box.local', 'db.internal', 'host.home.arpa', '192.168.0.10', 'vm_1'])(
    'warns about %s, saying to set --hostname',
    (name) => {
      const problem = hostnameProblem(name);
      expect(problem).toContain(`"${name}" is not a fully qualified domain name`);
      expect(problem).toContain('--hostname');
    },
  );
});
