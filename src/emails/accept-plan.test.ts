import { describe, expect, it } from 'vitest';
import { newEmail } from '../../test/postgres/email-fixture.ts';
import { AuthEpochMoved } from '../keys/index.ts';
import { acceptPlan, runPlan, runPlanAsync, type AcceptAsk } from './accept-plan.ts';
import type { AcceptOptions, Recipient } from './store.ts';

const to = (...addresses: string[]): Recipient[] => addresses.map((address) => ({ address, kind: 'to' }));
const ALL: AcceptOptions = {
  suppress: true,
  volume: { orgId: 'o1', limits: { monthly: null, daily: null }, now: 0 },
  idempotency: { key: 'k', hash: 'h1', expiresAt: '2026-11-27T12:00:00.000Z' },
};

/** Runs the plan with `answers` by step, recording the steps it asked for. */
function run(opts: AcceptOptions, answers: Partial<Record<AcceptAsk['step'], unknown>> = {}, trial = false) {
  const asked: AcceptAsk[] = [];
  const e = newEmail('e1', { to: ['A@x.test', 'b@x.test'], ...(trial ? { trial: true } : {}) });
  const result = runPlan(acceptPlan(e, to('A@x.test', 'b@x.test'), opts), (ask) => {
    asked.push(ask);
    return answers[ask.step];
  });
  return { result, asked, email: e };
}

describe('acceptPlan', () => {
  it('asks in order: the key, the suppression list, the volume, the insert, the record', () => {
    const { result, asked } = run(ALL, { reasons: () => undefined });
    expect(asked.map((a) => a.step)).toEqual(['prior', 'reasons', 'reserve', 'insert', 'save']);
    expect(asked[1]).toEqual({ step: 'reasons', addresses: ['a@x.test', 'b@x.test'] });
    expect(result).toEqual({ replay: false, response: { id: 'e1', status: 'QUEUED', skipped_recipients: [] } });
    expect(asked[4]).toEqual({ step: 'save', response: result.response });
  });

  it('asks nothing but the insert when no option is on', () => {
    const { asked } = run({ suppress: false, volume: null, idempotency: null });
    expect(asked.map((a) => a.step)).toEqual(['insert']);
  });

  it('replays a committed request without asking more; another request under the key is refused', () => {
    const prior = { request_hash: 'h1', response: '{"id":"e0","status":"QUEUED","skipped_recipients":[]}' };
    const { result, asked } = run(ALL, { prior });
    expect(asked.map((a) => a.step)).toEqual(['prior']);
    expect(result).toEqual({ replay: true, response: { id: 'e0', status: 'QUEUED', skipped_recipients: [] } });
    expect(() => run(ALL, { prior: { ...prior, request_hash: 'h2' } })).toThrow(
      expect.objectContaining({ code: 'idempotency_key_reused' }),
    );
  });

  it("confirms a kept key's epoch before anything else, and asks nothing more when it moved", () => {
    const auth = { epoch: 7, verified: false, read: () => 7 };
    const { asked } = run({ ...ALL, auth }, { epoch: true, reasons: () => undefined });
    expect(asked.map((a) => a.step)).toEqual(['epoch', 'prior', 'reasons', 'reserve', 'insert', 'save']);
    const moved = { ...ALL, auth: { ...auth, read: () => 8 } };
    expect(() => run(moved, { epoch: false })).toThrow(AuthEpochMoved);
    expect(() => run({ ...ALL, auth }, { epoch: false, prior: { request_hash: 'h1', response: '{}' } })).toThrow(
      AuthEpochMoved,
    );
  });

  it('refuses a second trial email before reading anything else', () => {
    expect(() => run({ suppress: false, volume: null, idempotency: null }, { trial: true }, true)).toThrow(
      expect.objectContaining({ code: 'trial_restricted' }),
    );
  });

  it('reserves and inserts only the recipients not suppressed, and lists the others', () => {
    const { result, asked, email } = run(ALL, { reasons: (a: string) => (a === 'a@x.test' ? 'BOUNCE' : undefined) });
    expect(asked.find((a) => a.step === 'reserve')).toEqual({ step: 'reserve', count: 1 });
    expect(asked.find((a) => a.step === 'insert')).toEqual({ step: 'insert', recipients: to('b@x.test') });
    expect(result.response.skipped_recipients).toEqual([{ email: 'A@x.test', reason: 'BOUNCE' }]);
    expect(email.to).toEqual(['b@x.test']);
  });

  it('runs the same with asynchronous answers', async () => {
    const steps: string[] = [];
    const e = newEmail('e2', { to: ['a@x.test'] });
    const result = await runPlanAsync(acceptPlan(e, to('a@x.test'), ALL), (ask) => {
      steps.push(ask.step);
      return Promise.resolve(ask.step === 'reasons' ? () => undefined : undefined);
    });
    expect(steps).toEqual(['prior', 'reasons', 'reserve', 'insert', 'save']);
    expect(result.replay).toBe(false);
  });
});
