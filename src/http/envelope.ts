import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, type ErrorCode } from '../errors.ts';

/** Fastify's own client errors, mapped to our codes (decisions.md, "Envelope"). */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_request',
  FST_ERR_BAD_URL: 'not_found',
};

/** Any thrown value as the AppError a client sees; the one place HTTP maps errors. */
export function httpErrorOf(e: unknown): AppError {
  if (isAppError(e)) return e;
  const err = e as { code?: string; statusCode?: number; message?: string } | null;
  const mapped = err?.code ? FASTIFY_CODES[err.code] : undefined;
  if (mapped) return new AppError(mapped);
  if (e instanceof SyntaxError) return new AppError('invalid_json', `The body is not valid JSON: ${e.message}`);
  if (err?.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('invalid_request', err.message ?? 'The request is not valid');
  }
  return new AppError('internal_error');
}

/** Sends the contract's error envelope; the request id sits in both places. */
export function sendError(req: FastifyRequest, reply: FastifyReply, e: unknown): FastifyReply {
  const err = httpErrorOf(e);
  if (err.code === 'internal_error') req.log.error({ err: e }, 'unhandled error');
  // Every 429 says when to come back, in whole seconds, at least 1 (its producer's wait, else 1).
  const retryAfter = err.retryAfter ?? (err.status === 429 ? 1 : undefined);
  if (retryAfter !== undefined) void reply.header('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
  return reply.code(err.status).send({
    error: { code: err.code, message: err.message, details: err.details, request_id: req.id },
    request_id: req.id,
  });
}
