import { z } from 'zod';
import type { App } from '../app.ts';
import { reportDayOut, reportDaysQuerySchema } from '../inbound/index.ts';
import { parseInput } from '../validation.ts';
import * as out from './management-schemas.ts';
import { memberHandler } from './org-route.ts';

/** Sending domains of an organization, and their binding to projects. */

/** The body of POST …/domains over HTTP: the organization is the path's. */
const addDomainBody = z.strictObject({
  name: z.string().min(1).max(253),
  project_id: z.uuid().optional(),
  ed25519: z.boolean().optional(),
  receiving: z.boolean().optional(),
});

/** The body of PATCH …/domains/{id}: Ed25519 signing beside RSA, receiving mail (issue 34): each on or off. */
const updateDomainBody = z
  .strictObject({ ed25519: z.boolean().optional(), receiving: z.boolean().optional() })
  .refine((b) => b.ed25519 !== undefined || b.receiving !== undefined, {
    message: 'name ed25519, receiving or both',
  });

/** The id of a domain of the organization (404 for another's). */
const domainIdOf = async (app: App, orgId: string, domainId: string) =>
  (await app.domains.getDomainOf(orgId, domainId)).id;

export const listDomains = memberHandler(
  { summary: 'Sending domains', response: z.array(out.domainOut) },
  ({ org }, app) => app.domains.listDomains(org.id),
);

export const addDomain = memberHandler(
  {
    summary: 'Add a domain (with a new DKIM key and the records to publish)',
    body: addDomainBody,
    response: out.domainOut,
  },
  ({ org, body, actor }, app) => {
    const b = parseInput(addDomainBody, body);
    return app.domains.addDomain(
      { name: b.name, organization: org.id, project: b.project_id, ed25519: b.ed25519, receiving: b.receiving },
      actor,
    );
  },
);

export const getDomain = memberHandler(
  { summary: 'A domain with its records and latest checks', response: out.domainOut },
  ({ org, params }, app) => app.domains.getDomainOf(org.id, params.domain_id!),
);

export const verifyDomain = memberHandler(
  { summary: 'Look the records up now', response: out.domainOut },
  async ({ org, params, actor }, app) =>
    app.domains.verifyDomain(await domainIdOf(app, org.id, params.domain_id!), actor),
);

export const listDmarcReports = memberHandler(
  {
    summary: "The domain's DMARC aggregate reports per day and source IP; flagged: not svc's and failing DMARC",
    query: reportDaysQuerySchema,
    response: z.array(reportDayOut),
  },
  async ({ org, params, query }, app) =>
    app.dmarc.listReportDays(
      await domainIdOf(app, org.id, params.domain_id!),
      parseInput(reportDaysQuerySchema, query).days,
    ),
);

export const rotateDkim = memberHandler(
  {
    summary: 'Rotate the DKIM keys: new keys under new selectors, signing once their records are seen',
    response: out.domainOut,
  },
  async ({ org, params, actor }, app) =>
    app.domains.rotateDkim(await domainIdOf(app, org.id, params.domain_id!), actor),
);

export const updateDomain = memberHandler(
  {
    summary: 'Turn Ed25519 signing (beside RSA) or receiving mail on or off',
    body: updateDomainBody,
    response: out.domainOut,
  },
  async ({ org, params, body, actor }, app) => {
    const b = parseInput(updateDomainBody, body);
    const id = await domainIdOf(app, org.id, params.domain_id!);
    let domain = b.ed25519 === undefined ? undefined : await app.domains.setEd25519(id, b.ed25519, actor);
    if (b.receiving !== undefined) domain = await app.domains.setReceiving(id, b.receiving, actor);
    return domain!;
  },
);

export const deleteDomain = memberHandler({ summary: 'Delete a domain' }, async ({ org, params, actor }, app) =>
  app.domains.deleteDomain(await domainIdOf(app, org.id, params.domain_id!), actor),
);

export const bindDomain = memberHandler(
  {
    summary: 'Bind a domain to a project (its LIVE keys may send from it once it is verified)',
    response: out.domainOut,
  },
  async ({ org, params, actor }, app) =>
    app.domains.bindDomain(await domainIdOf(app, org.id, params.domain_id!), params.project_id!, actor),
);

export const unbindDomain = memberHandler(
  { summary: 'Unbind a domain from a project' },
  async ({ org, params, actor }, app) =>
    app.domains.unbindDomain(await domainIdOf(app, org.id, params.domain_id!), params.project_id!, actor),
);
