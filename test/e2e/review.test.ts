/**
 * `netform review` end to end on SQLite (test/e2e/review-scenario.ts; PostgreSQL runs the same in
 * test/integration/postgres-review.test.ts), and with --embedded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { parseCsv } from '../helpers/csv.js';
import { reviewFixture, runReviewScenario, type ReviewFixture } from './review-scenario.js';

describe('netform review (SQLite)', () => {
  let fixture: ReviewFixture;
  beforeAll(async () => {
    fixture = await reviewFixture();
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it('reports users, reach and findings; telemetry "unknown" until the server records it, then "never"', async () => {
    await runReviewScenario(fixture, parseCsv);
  });
});

describe('netform completion', () => {
  it('offers review and its options', async () => {
    const script = await runCli(['completion', 'bash']);
    expect(script.code).toBe(0);
    expect(script.stdout).toMatch(/\breview\b/);
    expect(script.stdout).toContain('--stale-days');
  });
});

describe('netform review --embedded', () => {
  it('reads the bundled server in-process: telemetry is "unknown" there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netform-review-embedded-'));
    try {
      const applied = await runCli(['apply', '--embedded', '-f', join(process.cwd(), 'examples/basic'), '--yes'], {
        cwd: dir,
      });
      expect(applied.code).toBe(0);
      const review = await runCli(['review', '--embedded', '--format', 'json'], { cwd: dir });
      expect(review.code).toBe(0);
      const report = JSON.parse(review.stdout);
      expect(report.telemetry).toEqual({ handshakes: 'not recorded', sign_ins: 'not recorded' });
      expect(report.users[0].role).toBe('admin');
      expect(
        report.users.flatMap((u: { devices: { handshake: string }[] }) => u.devices.map((d) => d.handshake)),
      ).toContain('unknown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
