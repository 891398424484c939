/** The breaker that notices a server gone mid-apply, and the outcome lines of apply's progress. */
import { describe, expect, it } from 'vitest';
import { ServerGoneBreaker, type ChangeResult } from '../../../src/apply/index.js';
import { ApiError } from '../../../src/client/index.js';
import { outcomeLine } from '../../../src/views/progress.js';

const result = (status: ChangeResult['status']): ChangeResult => ({
  id: 'user:a',
  label: 'user a@example.com',
  action: 'create',
  status,
});
const refused = new ApiError('POST', '/v0/users', null, {}, 'ECONNREFUSED', {
  server: 'http://vpn.test',
  problem: 'refused',
});
const invalid = new ApiError('POST', '/v0/users', 422, { email: ['is invalid'] }, '');

describe('ServerGoneBreaker', () => {
  it('trips after 3 unanswered writes in a row; any answer resets the count', () => {
    const breaker = new ServerGoneBreaker();
    breaker.observe(result('failed'), refused);
    breaker.observe(result('failed'), refused);
    breaker.observe(result('failed'), invalid); // the server answered
    breaker.observe(result('failed'), refused);
    breaker.observe(result('done'));
    breaker.observe(result('failed'), refused);
    breaker.observe(result('failed'), refused);
    expect(breaker.tripped).toBeNull();
    breaker.observe(result('failed'), refused);
    expect(breaker.tripped).toBe(
      'the server stopped answering (3 writes in a row: connection refused at http://vpn.test)',
    );
  });

  it('ignores changes that were not attempted', () => {
    const breaker = new ServerGoneBreaker(1);
    breaker.observe(result('not_attempted'));
    expect(breaker.tripped).toBeNull();
  });
});

describe('outcomeLine', () => {
  it('says what was done, in how long, and why a write failed', () => {
    expect(outcomeLine(result('done'), 215)).toBe('created user a@example.com (0.2 s)');
    expect(outcomeLine({ ...result('failed'), message: 'POST /v0/users: 422 email is invalid' }, 1250)).toBe(
      'FAILED to create user a@example.com (1.3 s): POST /v0/users: 422 email is invalid',
    );
    expect(
      outcomeLine(
        { ...result('not_attempted'), action: 'delete', message: 'not started: apply was interrupted (SIGINT)' },
        0,
      ),
    ).toBe('not attempted: delete user a@example.com: not started: apply was interrupted (SIGINT)');
  });
});
