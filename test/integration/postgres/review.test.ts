/** `netform review` end to end on PostgreSQL: the scenario of test/helpers/review-scenario.ts, its telemetry written with SQL. */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { parseCsv } from '../../helpers/csv.js';
import { reviewFixture, runReviewScenario, type ReviewFixture } from '../../helpers/review-scenario.js';

describe('netform review (PostgreSQL)', () => {
  let fixture: ReviewFixture;
  beforeAll(async () => {
    fixture = await reviewFixture();
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('reports users, reach and findings; telemetry "unknown" until the server records it, then "never"', async () => {
    await runReviewScenario(fixture, parseCsv);
  }, 180_000); // about ten runs of the CLI, each with its own Node start
});
