export { createDomainsRepo, type DomainsRepo } from './repo.ts';
