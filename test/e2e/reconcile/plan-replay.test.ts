/**
 * A saved plan is applied once on netform's own server: apply records its seal there before
 * writing anything (POST /netform/applied-plans), and a second apply of the same file is refused
 * (exit 1, nothing written), even when the plan would not be stale (its objects deleted by hand
 * since). `--embedded` the same. A plain /v0 server, which answers 404 there, keeps no record:
 * the plan applies as before. `apply --reviewed` is not a saved-plan apply and records nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recording-proxy.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  workspace,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const REFUSAL =
  /error: this saved plan was already applied to (\S+) on (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ), and a saved plan is applied once; plan again \(netform plan -o\), then apply the new plan\. Nothing was changed\n/;

function files(domain: string, users: string[], prune = false): string {
  return `version: 1
settings: { prune: ${prune}, manage: { users: ["*@${domain}"], rules: [] } }
users:${users.length === 0 ? ' []' : ''}
${users.map((u) => `  - email: ${u}@${domain}\n`).join('')}`;
}

const emails = async (domain: string) =>
  (await serverState(server)).users.map((u) => u.email as string).filter((e) => e.endsWith(`@${domain}`));

async function deleteByHand(email: string): Promise<void> {
  const res = await server.api('DELETE', `/v0/users/${encodeURIComponent(email)}`);
  expect(res.status).toBe(204);
}

/** A plain /v0 server in front of `target`: everything outside /v0 answers 404, as on Firezone 0.7. */
function plainV0Proxy(target: string): Promise<RecordingProxy> {
  return startRecordingProxy(target, {
    answer: (req, res) => {
      if (req.url?.startsWith('/v0/')) return false;
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":{"detail":"Not Found"}}');
      return true;
    },
  });
}

describe('a saved plan is applied once on netform server', () => {
  it('the same file applied again is refused with nothing written, though its objects were deleted by hand since', async () => {
    const file = ws.write('once/netform.yaml', files('once.test', ['ann', 'bob']));
    const plan = ws.path('once.json');
    const planned = await netform(server, ['plan', '-f', file, '-o', plan]);
    expect(planned.code, describeResult(planned)).toBe(2);

    const applied = await netform(server, ['apply', plan]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(await emails('once.test')).toEqual(['ann@once.test', 'bob@once.test']);

    // Not stale any more: what it creates is gone again.
    await deleteByHand('ann@once.test');
    await deleteByHand('bob@once.test');
    const again = await netform(server, ['apply', plan]);
    expect(again.code, describeResult(again)).toBe(1);
    const refusal = REFUSAL.exec(again.stderr);
    expect(refusal, again.stderr).not.toBeNull();
    expect(refusal![1]).toBe(server.url);
    expect(Math.abs(Date.parse(refusal![2]!) - Date.now())).toBeLessThan(10 * 60_000);
    expect(await emails('once.test')).toEqual([]);

    // A new plan of the same files is a new plan: it applies.
    const replanned = await netform(server, ['plan', '-f', file, '-o', plan]);
    expect(replanned.code, describeResult(replanned)).toBe(2);
    const reapplied = await netform(server, ['apply', plan]);
    expect(reapplied.code, describeResult(reapplied)).toBe(0);
    expect(await emails('once.test')).toEqual(['ann@once.test', 'bob@once.test']);
  });

  it('a stale plan is refused as stale, and is not recorded: applied once it is current again, it applies', async () => {
    const file = ws.write('stale/netform.yaml', files('stale.test', ['cy']));
    const plan = ws.path('stale.json');
    expect((await netform(server, ['plan', '-f', file, '-o', plan])).code).toBe(2);
    const made = await server.api('POST', '/v0/users', { user: { email: 'cy@stale.test' } });
    expect(made.status).toBe(201);
    const stale = await netform(server, ['apply', plan]);
    expect(stale.code, describeResult(stale)).toBe(4);
    await deleteByHand('cy@stale.test');
    const applied = await netform(server, ['apply', plan]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(await emails('stale.test')).toEqual(['cy@stale.test']);
  });

  it('apply --reviewed records nothing: the reviewed plan is then still applicable as a saved plan', async () => {
    const file = ws.write('reviewed/netform.yaml', files('reviewed.test', ['dee']));
    const plan = ws.path('reviewed.json');
    expect((await netform(server, ['plan', '-f', file, '-o', plan])).code).toBe(2);
    const reviewed = await netform(server, ['apply', '-f', file, '--reviewed', plan]);
    expect(reviewed.code, describeResult(reviewed)).toBe(0);
    await deleteByHand('dee@reviewed.test');
    const applied = await netform(server, ['apply', plan]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(await emails('reviewed.test')).toEqual(['dee@reviewed.test']);
  });

  it('through a plain /v0 server (404 outside /v0) no record is kept: the plan applies twice, as before', async () => {
    const proxy = await plainV0Proxy(server.url);
    try {
      const env = { NETFORM_URL: proxy.url };
      const file = ws.write('plain/netform.yaml', files('plain.test', ['eve']));
      const plan = ws.path('plain.json');
      expect((await netform(server, ['plan', '-f', file, '-o', plan], env)).code).toBe(2);
      const applied = await netform(server, ['apply', plan], env);
      expect(applied.code, describeResult(applied)).toBe(0);
      expect(proxy.requests).toContain('POST /netform/applied-plans');
      await deleteByHand('eve@plain.test');
      const again = await netform(server, ['apply', plan], env);
      expect(again.code, describeResult(again)).toBe(0);
      expect(await emails('plain.test')).toEqual(['eve@plain.test']);
    } finally {
      await proxy.close();
    }
  });
});

describe('--embedded', () => {
  const local = workspace();
  afterAll(() => local.cleanup());
  const NO_SERVER = { NETFORM_URL: undefined, NETFORM_TOKEN: undefined, NETFORM_TOKEN_USER: undefined };
  const run = (args: string[]) => runCli(args, { cwd: local.dir, env: NO_SERVER });

  it('refuses a second apply of a saved plan, with nothing written', async () => {
    local.write('add/netform.yaml', files('embedded.test', ['fay']));
    local.write('none/netform.yaml', files('embedded.test', [], true));
    const planned = await run(['plan', '--embedded', '-f', 'add', '-o', 'add.json']);
    expect(planned.code, describeResult(planned)).toBe(2);
    const applied = await run(['apply', 'add.json', '--embedded']);
    expect(applied.code, describeResult(applied)).toBe(0);

    // fay deleted again (so that the plan is not stale), then the same plan once more.
    const pruned = await run(['apply', '--embedded', '-f', 'none', '--yes']);
    expect(pruned.code, describeResult(pruned)).toBe(0);
    expect(pruned.stdout).toContain('fay@embedded.test');
    const again = await run(['apply', 'add.json', '--embedded']);
    expect(again.code, describeResult(again)).toBe(1);
    expect(again.stderr).toMatch(REFUSAL);
    expect(again.stderr).toContain(`already applied to embedded:${local.path('.netform/embedded.db')} on `);

    const state = await run(['plan', '--embedded', '-f', 'none']);
    expect(state.code, describeResult(state)).toBe(0);
  });
});
