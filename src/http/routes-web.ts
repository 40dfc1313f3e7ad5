// The web dashboard's page and assets (issue 31). The page is the same for every route of the
// client (hash routes); everything it shows comes from the management API with the user's
// session, so the server enforces every role as it does for any client.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyReply } from 'fastify';
import { AppError } from '../errors.ts';
import type { Handler } from './handler.ts';
import { DASHBOARD_FILES, loadDashboardAssets, type DashboardFile } from './dashboard-assets.ts';

/**
 * No inline script or style, nothing from elsewhere, and no framing ("Security": a strict
 * Content-Security-Policy, frame-ancestors 'none'). An email's HTML is shown in a sandboxed
 * srcdoc frame, which inherits this policy: its remote images and scripts do not load.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/assets/app.js"></script>
</body>
</html>
`;

const TYPES: Record<DashboardFile, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** An asset as served: its bytes, gzipped once, and a tag for revalidation. */
interface Served {
  raw: Buffer;
  gzip: Buffer;
  etag: string;
}
let assets: Promise<Map<DashboardFile, Served>> | undefined;

async function served(): Promise<Map<DashboardFile, Served>> {
  const files = await loadDashboardAssets();
  return new Map(
    [...files].map(([name, raw]) => [
      name,
      {
        raw,
        gzip: gzipSync(raw, { level: 9 }),
        etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
      },
    ]),
  );
}

function secured(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', DASHBOARD_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'no-cache');
}

export const getDashboard: Handler = (_req, reply) => secured(reply).type('text/html; charset=utf-8').send(PAGE);

export const getDashboardAsset: Handler = async (req, reply) => {
  const file = (req.params as { file: string }).file;
  if (!(DASHBOARD_FILES as readonly string[]).includes(file)) throw new AppError('not_found');
  assets ??= served().catch((e: unknown) => {
    assets = undefined;
    throw e;
  });
  const asset = (await assets).get(file as DashboardFile)!;
  // no-cache: the browser asks again each load, and an unchanged asset costs a 304.
  secured(reply)
    .type(TYPES[file as DashboardFile])
    .header('ETag', asset.etag)
    .header('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  if (!/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) return reply.send(asset.raw);
  return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
};
