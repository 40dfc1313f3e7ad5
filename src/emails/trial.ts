import { AppError } from '../errors.ts';
import type { DomainsStore } from '../domains/index.ts';
import type { Recipient } from './store.ts';

export interface TrialDeps {
  /** The server's `--sandbox-domain`; undefined: no trial. */
  sandboxDomain: string | undefined;
  users: { findUserById(id: string): Promise<{ email: string } | undefined> };
  domains: Pick<DomainsStore, 'findDomainByName'>;
}

/**
 * The onboarding trial (decisions.md "Sending"; docs/decisions.md "Onboarding trial and
 * resend"): a LIVE key may send from any address at the server's sandbox domain without a
 * verified domain of its own, once per project, only to the address of the user who
 * created the key. Once per project is checked where the email is inserted (repo.ts).
 */
export function createTrialRule(deps: TrialDeps) {
  const sandbox = deps.sandboxDomain?.toLowerCase();
  return {
    /** Whether a LIVE send from `domain`, not verified for the project, is a trial send. */
    covers: (domain: string): boolean => sandbox !== undefined && domain === sandbox,

    /**
     * Throws unless the trial can carry this send: the sandbox domain is a verified domain
     * of the server (its DKIM key signs the email), and every recipient is the key creator.
     */
    async check(createdBy: string | null, recipients: Recipient[]): Promise<void> {
      const domain = sandbox === undefined ? undefined : await deps.domains.findDomainByName(sandbox);
      if (domain?.status !== 'VERIFIED' || !domain.dkim_private_key) {
        throw new AppError(
          'domain_not_verified',
          `The sandbox domain ${sandbox} is not set up on this server (no verified domain with a DKIM key)`,
          { code: 'domain_not_verified', domain: sandbox, reason: 'sandbox_domain_not_set_up' },
        );
      }
      const creator = createdBy === null ? undefined : await deps.users.findUserById(createdBy);
      if (!creator) {
        throw new AppError('trial_restricted', 'The onboarding trial needs an API key created by a signed-in user', {
          reason: 'no_key_creator',
        });
      }
      const own = creator.email.toLowerCase();
      if (recipients.some((r) => r.address.toLowerCase() !== own)) {
        throw new AppError(
          'trial_restricted',
          'The onboarding trial sends only to the address of the user who created this API key',
          { reason: 'recipient_not_key_creator' },
        );
      }
    },
  };
}

export type TrialRule = ReturnType<typeof createTrialRule>;
