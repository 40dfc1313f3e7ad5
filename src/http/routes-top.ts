import { principalOf } from './auth.ts';
import type { Handler } from './handler.ts';

/**
 * svc top --server: what the data dir's svc top shows, for the key's project, to a key
 * that may read (docs/decisions.md, "svc top").
 */

export const getTopSnapshot: Handler = async (req, reply, { app }) =>
  reply.send({ data: await app.top.snapshot(principalOf(req).project_id, req.query) });

export const getTopEmail: Handler = async (req, reply, { app }) =>
  reply.send({ data: await app.top.detail(principalOf(req).project_id, (req.params as { id: string }).id) });
