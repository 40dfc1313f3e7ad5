import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId, randomToken, sha256Hex } from '../lib/ids.ts';
import { hashPassword, verifyPassword, type PasswordCost } from '../lib/password.ts';
import { parseInput } from '../validation.ts';
import type { NewToken, SessionsStore } from './store.ts';
import {
  ACCESS_PREFIX,
  ACCESS_TTL_MS,
  REFRESH_PREFIX,
  REFRESH_TTL_MS,
  loginSchema,
  type LoginInput,
} from './schema.ts';
import type { LoginThrottle } from './throttle.ts';

/** What login and refresh answer: the body's token and the refresh cookie's. */
export interface SessionTokens {
  access_token: string;
  token_type: 'bearer';
  /** Seconds. */
  expires_in: number;
  refresh_token: string;
  /** Seconds. */
  refresh_expires_in: number;
}

/** Who a valid access token speaks for. */
export interface SessionPrincipal {
  user_id: string;
  family_id: string;
}

export interface SessionsDeps {
  repo: SessionsStore;
  clock: Clock;
  throttle: LoginThrottle;
  users: { findUserByEmail(email: string): Promise<{ id: string; password_hash: string } | undefined> };
  /** The cost new passwords are hashed at (accounts' passwordCost), which the decoy must match. */
  passwordCost?: PasswordCost | undefined;
}

const WRONG = 'Wrong email or password';

/** Management API sessions: login, refresh with rotation and reuse detection, logout, authentication. */
export function createSessionsService({ repo, clock, throttle, users, passwordCost }: SessionsDeps) {
  // Compared against when no user has the address, so a login takes as long either way.
  let decoy: Promise<string> | undefined;

  function issue(): { tokens: NewToken[]; body: SessionTokens } {
    const access = ACCESS_PREFIX + randomToken(32);
    const refresh = REFRESH_PREFIX + randomToken(32);
    const now = clock.now();
    return {
      tokens: [
        { token_hash: sha256Hex(access), kind: 'access', expires_at: iso(now + ACCESS_TTL_MS) },
        { token_hash: sha256Hex(refresh), kind: 'refresh', expires_at: iso(now + REFRESH_TTL_MS) },
      ],
      body: {
        access_token: access,
        token_type: 'bearer',
        expires_in: ACCESS_TTL_MS / 1000,
        refresh_token: refresh,
        refresh_expires_in: REFRESH_TTL_MS / 1000,
      },
    };
  }

  return {
    /**
     * Checks an email and password (scrypt) and starts a session. Failed tries
     * are limited per address and client IP, per client IP, and braked per address
     * (throttle.ts; 429 rate_limited with the wait);
     * an unknown address costs the same scrypt as a wrong password and gets the
     * same answer, so neither the reply nor its timing says who has an account.
     */
    async login(input: LoginInput, ip: string): Promise<SessionTokens> {
      const { email, password } = parseInput(loginSchema, input);
      const wait = await throttle.retryAfter(email, ip);
      if (wait > 0) throw new AppError('rate_limited', 'Too many failed logins: try again later', null, wait);
      const user = await users.findUserByEmail(email);
      const ok = await verifyPassword(
        password,
        user?.password_hash ?? (await (decoy ??= hashPassword(randomToken(), passwordCost))),
      );
      if (!user || !ok) {
        await throttle.recordFailure(email, ip);
        throw new AppError('unauthorized', WRONG);
      }
      await throttle.recordSuccess(email, ip);
      const { tokens, body } = issue();
      await repo.startFamily(newId(clock.now()), user.id, iso(clock.now()), tokens);
      return body;
    },

    /** Rotates a refresh token: a new pair, the old one spent. Reuse of a spent one revokes the whole session. */
    async refresh(refreshToken: string | undefined): Promise<SessionTokens> {
      if (!refreshToken?.startsWith(REFRESH_PREFIX)) throw new AppError('unauthorized', 'No valid refresh cookie');
      const { tokens, body } = issue();
      const r = await repo.rotate(sha256Hex(refreshToken), iso(clock.now()), tokens);
      if (!r.ok) {
        const why = r.reason === 'reused' ? 'was already used: the session is revoked' : `is ${r.reason}`;
        throw new AppError('unauthorized', `The refresh token ${why}`);
      }
      return body;
    },

    /** Ends the session of a refresh token or an access token: every token of its family stops working. */
    async logout(tokens: { refresh?: string | undefined; access?: string | undefined }): Promise<void> {
      for (const token of [tokens.refresh, tokens.access]) {
        const row = token ? await repo.findToken(sha256Hex(token)) : undefined;
        if (row) return repo.revokeFamily(row.family_id, iso(clock.now()), 'logout');
      }
    },

    /** Resolves an access token, or throws 401 for a missing, unknown, expired or revoked one. */
    async authenticate(token: string | undefined): Promise<SessionPrincipal> {
      const row = token?.startsWith(ACCESS_PREFIX) ? await repo.findToken(sha256Hex(token)) : undefined;
      if (!row || row.kind !== 'access' || row.family_revoked_at || row.expires_at <= iso(clock.now())) {
        throw new AppError('unauthorized', 'Missing, expired or invalid session token');
      }
      return { user_id: row.user_id, family_id: row.family_id };
    },

    /** Drops expired tokens (the server runs it hourly). */
    purgeExpired: () => repo.purgeExpired(iso(clock.now())),
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
