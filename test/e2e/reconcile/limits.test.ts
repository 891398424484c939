/**
 * Safety limits (exit 3 after printing the whole plan; lifted by --allow-* for one run, also for
 * a saved plan), confirmation, output formats, and the errors of a missing server or plan.
 */
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import {
  bulkFixture,
  describeResult,
  netform,
  serverState,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const bulk = bulkFixture(12);
const yaml = bulk.yaml;

useServerAndWorkspace((started) => ({ server, ws } = started), bulk.seed);

describe('safety limits', () => {
  it('prints the whole plan, then refuses with exit 3; --allow-deletes lifts the limit for one run', async () => {
    const file = ws.write('limits.yaml', yaml());
    const planned = await netform(server, ['plan', '-f', file]);
    expect(planned.code, describeResult(planned)).toBe(3);
    for (let i = 2; i < 12; i++) expect(planned.stdout).toContain(`  - user u${i}@bulk.test`);
    expect(planned.stdout).toContain(
      'Over a safety limit: 10 deletions (cascades included) exceed the limit of 5 (default (25%, at least 5)); pass --allow-deletes 10 to allow this run',
    );

    const refused = await netform(server, ['apply', '-f', file, '--yes']);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stderr).toContain('Refused: the plan is over a safety limit. Nothing was changed.');
    expect((await serverState(server)).users).toHaveLength(13);

    const savedPath = ws.path('over-limit.json');
    const saved = await netform(server, ['plan', '-f', file, '-o', savedPath]);
    expect(saved.code).toBe(3);
    const stillRefused = await netform(server, ['apply', savedPath, '--yes']);
    expect(stillRefused.code, describeResult(stillRefused)).toBe(3);
    const tooFew = await netform(server, ['apply', savedPath, '--yes', '--allow-deletes', '9']);
    expect(tooFew.code, describeResult(tooFew)).toBe(3);
    expect((await serverState(server)).users).toHaveLength(13);

    const lifted = await netform(server, ['apply', savedPath, '--yes', '--allow-deletes', '10']);
    expect(lifted.code, describeResult(lifted)).toBe(0);
    expect(lifted.stdout).toContain('Apply: 11 done, 0 failed, 0 not attempted.');
    expect((await serverState(server)).users.map((u) => u.email).sort()).toEqual([
      'admin@example.com',
      'u0@bulk.test',
      'u1@bulk.test',
    ]);
  });

  it('honours limits written in the files', async () => {
    const file = ws.write(
      'update-limit.yaml',
      yaml().replace('  prune: true\n', '  prune: true\n  limits: { update: 0 }\n').replace('mtu: 1400', 'mtu: 1420'),
    );
    const refused = await netform(server, ['plan', '-f', file]);
    expect(refused.code, describeResult(refused)).toBe(3);
    expect(refused.stdout).toContain('1 updates (replacements included) exceed the limit of 0 (0)');
    const lifted = await netform(server, ['plan', '-f', file, '--allow-updates', '1']);
    expect(lifted.code, describeResult(lifted)).toBe(2);
  });
});

describe('confirmation and output formats', () => {
  it('refuses to apply without a terminal and without --yes, changing nothing', async () => {
    const file = ws.write('confirm.yaml', yaml('  - email: confirm@bulk.test\n', 1300));
    const refused = await netform(server, ['apply', '-f', file]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(
      'refusing to apply without confirmation: there is no terminal to ask on; pass --yes to apply unattended',
    );
    expect(refused.stdout).toContain('+ user confirm@bulk.test');
    expect((await serverState(server)).users.map((u) => u.email)).not.toContain('confirm@bulk.test');

    const md = await netform(server, ['plan', '-f', file, '--format', 'markdown']);
    expect(md.code).toBe(2);
    expect(md.stdout.startsWith('<!-- netform-plan -->\n')).toBe(true);
    expect(md.stdout).toContain('+ user confirm@bulk.test');
  });

  it('asks for -f or a saved plan, and for a server', async () => {
    const none = await netform(server, ['apply', '--yes']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('nothing to apply: pass -f PATH');
    const noServer = await netform(server, ['plan', '-f', ws.path('confirm.yaml')], { NETFORM_URL: undefined });
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toContain(
      'no server given: pass --url URL (or set NETFORM_URL) with a token, or --embedded',
    );
    expect(noServer.stderr).not.toMatch(/\n\s+at /);
  });
});
