/** Why apply stopped a write: codes from src/ops/apply.ts, words in the summary and the outcome lines. */
import { describe, expect, it } from 'vitest';
import type { ApplySummary, ChangeResult } from '../../../src/apply/executor.js';
import { renderApplySummary } from '../../../src/views/apply.js';
import { resultWhy, writeStopText } from '../../../src/views/ops-apply.js';
import { outcomeLine } from '../../../src/views/progress.js';

const result = (status: ChangeResult['status'], more: Partial<ChangeResult>): ChangeResult => ({
  id: 'c1',
  label: 'user a@example.com',
  action: 'create',
  status,
  ...more,
});

describe('why apply stopped a write', () => {
  it('words each code as apply has always said it', () => {
    expect(writeStopText({ code: 'interrupted', by: 'SIGINT' })).toBe('not started: apply was interrupted (SIGINT)');
    expect(writeStopText({ code: 'interrupted' })).toBe('not started: apply was interrupted');
    expect(writeStopText({ code: 'server_gone', reason: 'the server stopped answering (3 writes in a row)' })).toBe(
      'not started: the server stopped answering (3 writes in a row)',
    );
    expect(writeStopText({ code: 'in_flight_unknown' })).toBe(
      'still in flight when apply stopped waiting: its outcome is unknown (netform plan shows it)',
    );
  });

  it('puts the words after the label in the outcome line and the summary; an executor message as it is', () => {
    const stopped = result('failed', { stop: { code: 'in_flight_unknown' } });
    expect(outcomeLine(stopped, 1200)).toBe(
      'FAILED to create user a@example.com (1.2 s): still in flight when apply stopped waiting: its outcome is unknown (netform plan shows it)',
    );
    const summary: ApplySummary = {
      results: [result('not_attempted', { stop: { code: 'interrupted', by: 'SIGTERM' } })],
      done: 0,
      failed: 0,
      notAttempted: 1,
    };
    expect(renderApplySummary(summary, { color: false }).split('\n')[0]).toBe(
      'not attempted + user a@example.com: not started: apply was interrupted (SIGTERM)',
    );
    expect(resultWhy(result('failed', { message: 'email has already been taken' }))).toBe(
      'email has already been taken',
    );
    expect(resultWhy(result('done', {}))).toBeUndefined();
  });
});
