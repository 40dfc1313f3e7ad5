// The web dashboard's page and assets (issue 31). The page is the same for every route of the
// client (hash routes); everything it shows comes from the management API with the user's
// session, so the server enforces every role as it does for any client.
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

let assets: Promise<Map<DashboardFile, Buffer>> | undefined;

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
  assets ??= loadDashboardAssets().catch((e: unknown) => {
    assets = undefined;
    throw e;
  });
  const body = (await assets).get(file as DashboardFile)!;
  return secured(reply)
    .type(TYPES[file as DashboardFile])
    .send(body);
};
