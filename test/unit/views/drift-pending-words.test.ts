/**
 * W3.5: a drift pending with no change planned (an undeclared rule or admin counted, a guard)
 * names what differs in the webhook text, which has no Undeclared section to point at; the drift
 * text points at its Undeclared section, which it has.
 */
import { describe, expect, it } from 'vitest';
import { reportFromPlan } from '../../../src/drift/report.js';
import { planChanges } from '../../../src/plan/index.js';
import { driftText } from '../../../src/views/drift.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { webhookName, webhookText } from '../../../src/views/escape.js';
import { renderDrift } from '../../../src/views/drift-render.js';
import { desired, liveRule, liveState, liveUser, OPTIONS, user } from '../../helpers/plan-fixtures.js';

const admin = liveUser('admin@example.com', { role: 'admin' });
const TIMING = { startedAt: 0, finishedAt: 1, skippedTicks: 0 };

describe('drift pending with no change planned', () => {
  const plan = planChanges(
    desired({ settings: { manage: { users: ['nobody@*'], rules: ['10.0.0.0/8'] } } }),
    liveState({ users: [admin], rules: [liveRule({ destination: '10.9.0.0/16' })] }),
    OPTIONS,
  );

  it('the webhook names the undeclared rule, never "see Undeclared" or an empty list', () => {
    const said = driftText(reportFromPlan(wordedPlan(plan), TIMING));
    expect(said).toBe(
      'netform drift on http://127.0.0.1:4000: No changes planned, but the server does not match the desired state: ' +
        `${webhookText('rule accept 10.9.0.0/16 (global) is on the server but in no file')}.`,
    );
  });

  it('the drift text says what it saw, and its "see Undeclared" has an Undeclared section', () => {
    const text = renderDrift(plan, 'text', { color: false });
    expect(text).toContain('What differs:\n  rule accept 10.9.0.0/16 (global) is on the server but in no file');
    expect(text).toContain('Undeclared (live, inside the managed scope, declared in no file):\n');
    expect(text.trimEnd().split('\n').at(-1)).toBe(
      'No changes planned, but the server does not match the desired state: 1 object is on the server but in no file (see Undeclared).',
    );
  });

  it('with changes too, the webhook counts the undeclared admin among the differences', () => {
    const mallory = liveUser('mallory@example.com', { role: 'admin' });
    const withChange = planChanges(
      desired({
        settings: { manage: { users: ['*@example.com'], rules: [] } },
        users: [user('admin@example.com', { role: 'admin' }), user('new@example.com')],
      }),
      liveState({ users: [admin, mallory] }),
      OPTIONS,
    );
    const said = driftText(reportFromPlan(wordedPlan(withChange), TIMING));
    expect(said).toBe(
      'netform drift on http://127.0.0.1:4000: 2 differences from the desired state: ' +
        `${webhookName('user new@example.com')} is in the files but not on the server; ` +
        webhookText('user mallory@example.com (an admin) is on the server but in no file'),
    );
  });
});
