/**
 * `netform check` in a real git repository, in-process: `no-new-access --base REF` for a pull
 * request that only removes (pass), one that widens a port range and one that gives a rule set to
 * another user (fail, each grant naming its rule and file:line), `--live` against a real server
 * (the server now against after apply), `no-access-to` with `--except`, every format, and a gate
 * that cannot be evaluated (result `error`, exit 6).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { expandAccessDelta } from '../../../src/access/delta-sets.js';
import { git } from '../../helpers/git.js';
import type { TestServer } from '../../helpers/server.js';
import { describeResult, netform, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const ALICE = wgKey();
const BOB = wgKey();

/** alice holds the database rule set (a YAML anchor); bob gets it with `bobDb`; a global drop of 10.0.0.0/8. */
function desired(more: { ports?: string; bobDb?: boolean; web?: boolean } = {}): string {
  return `version: 1
settings:
  prune: true
  manage: { users: ["*@check.test"] }
users:
  - email: alice@check.test
    devices:
      - { name: laptop, public_key: "${ALICE}" }
    rules: &db
      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "${more.ports ?? '5432'}" }
${more.web === false ? '' : '      - { action: accept, destination: 10.30.0.0/16, port_type: tcp, port_range: "443" }\n'}  - email: bob@check.test
    devices:
      - { name: desk, public_key: "${BOB}" }
${more.bobDb ? '    rules: *db\n' : ''}rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;
}

const offline = { NETFORM_URL: undefined, NETFORM_TOKEN: undefined };
const validDelta = new Ajv2020({ allErrors: true }).compile(
  JSON.parse(readFileSync(new URL('../../../schemas/access-delta.schema.json', import.meta.url), 'utf8')) as object,
);

/** A repository whose main has desired(), and a branch `pr` with `head` committed. */
function repository(name: string, head: string): string {
  const repo = ws.path(name);
  ws.write(`${name}/desired/netform.yaml`, desired());
  git(ws.dir, 'init', '-q', '-b', 'main', repo);
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'base');
  git(repo, 'checkout', '-q', '-b', 'pr');
  ws.write(`${name}/desired/netform.yaml`, head);
  git(repo, 'commit', '-q', '--allow-empty', '-am', 'pr');
  return repo;
}

const check = (repo: string, ...args: string[]) =>
  netform(server, ['check', 'no-new-access', '--base', 'main', '-f', 'desired/', ...args], offline, repo);

describe('check no-new-access --base', () => {
  it('passes for a pull request that only removes access, and says what is lost', async () => {
    const repo = repository('removes', desired({ web: false }));
    const r = await check(repo);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(
      'check no-new-access: PASS: no user or device reaches anything it could not reach before (the files at main → the files now)',
    );
    const json = JSON.parse((await check(repo, '--format', 'json')).stdout);
    expect(json).toMatchObject({ check: 'no-new-access', result: 'pass', grants: [] });
    expect(validDelta(json.access_delta), JSON.stringify(validDelta.errors)).toBe(true);
    expect(json.access_delta.compared).toEqual({ before: 'the files at main', after: 'the files now' });
    expect(json.access_delta.blast_radius).toMatchObject({
      users_affected: 1,
      gained: { users: 0, address_ports: '0' },
      lost: { users: 1, devices: 1, address_ports: '65536' },
    });
    expect(expandAccessDelta(json.access_delta).entries[0]!.lost[0]).toMatchObject({
      addresses: ['10.30.0.0/16'],
      protocol: 'tcp',
      ports: '443',
      before: { action: 'accept', file: 'desired/netform.yaml', line: 11 },
      after: { action: 'drop', user: null, file: 'desired/netform.yaml', line: 15 },
    });
  });

  it('fails for a widened port range, naming the rule and its file:line, in every format', async () => {
    const repo = repository('widens', desired({ ports: '5432-5440' }));
    const r = await check(repo);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout.split('\n').slice(0, 2)).toEqual([
      'check no-new-access: FAIL: 1 new grant (the files at main → the files now)',
      '  alice@check.test (laptop) → tcp 5433-5440 to 10.20.0.0/16 (by accept 10.20.0.0/16 tcp 5432-5440 (alice@check.test) at desired/netform.yaml:10)',
    ]);

    const json = await check(repo, '--format', 'json');
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout);
    expect(doc.result).toBe('fail');
    expect(doc.grants).toEqual([
      expect.objectContaining({
        user: 'alice@check.test',
        devices: ['laptop'],
        addresses: ['10.20.0.0/16'],
        protocol: 'tcp',
        ports: '5433-5440',
        address_ports: String(65536 * 8),
        rule: expect.objectContaining({ port_range: '5432-5440', file: 'desired/netform.yaml', line: 10 }),
        before: expect.objectContaining({ action: 'drop', destination: '10.0.0.0/8' }),
      }),
    ]);

    const github = await check(repo, '--format', 'github');
    expect(github.code).toBe(1);
    expect(github.stdout).toContain(
      '::error file=desired/netform.yaml,line=10::alice@check.test (laptop) → tcp 5433-5440 to 10.20.0.0/16',
    );

    const sarif = await check(repo, '--format', 'sarif');
    expect(sarif.code).toBe(1);
    const [result] = JSON.parse(sarif.stdout).runs[0].results;
    expect(result).toMatchObject({
      ruleId: 'access-gate/new-access',
      level: 'error',
      locations: [
        { physicalLocation: { artifactLocation: { uri: 'desired/netform.yaml' }, region: { startLine: 10 } } },
      ],
    });
  });

  it('names everyone who gains a region once in JSON: grants refer to one list of grantees', async () => {
    // Users without own rules gain what the global rules open alike: one grant per region for both.
    const files = (opened: string) => `version: 1
users:
  - email: alice@check.test
    devices:
      - { name: laptop, public_key: "${ALICE}" }
  - email: bob@check.test
    devices:
      - { name: desk, public_key: "${BOB}" }
rules:
${opened}  - { action: drop, destination: 10.0.0.0/8 }
`;
    const repo = ws.path('everyone');
    ws.write('everyone/desired/netform.yaml', files(''));
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    ws.write(
      'everyone/desired/netform.yaml',
      files(`  - { action: accept, destination: 10.40.0.0/16, port_type: tcp, port_range: "22" }
  - { action: accept, destination: 10.50.0.0/16, port_type: udp, port_range: "53" }
`),
    );
    const r = await check(repo);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toContain('FAIL: 2 new grants');
    expect(r.stdout).toContain(
      '  alice@check.test (laptop), bob@check.test (desk) → tcp 22 to 10.40.0.0/16 (by accept',
    );

    const json = await check(repo, '--format', 'json');
    expect(json.code, describeResult(json)).toBe(1);
    const doc = JSON.parse(json.stdout);
    expect(doc.grantees).toEqual([
      { user: 'alice@check.test', devices: ['laptop'] },
      { user: 'bob@check.test', devices: ['desk'] },
    ]);
    expect(doc.who_sets).toEqual([[0, 1]]);
    expect(doc.grants.map((g: any) => [g.user, g.devices, g.who, g.protocol, g.ports, g.addresses])).toEqual([
      ['alice@check.test', ['laptop'], 0, 'tcp', '22', ['10.40.0.0/16']],
      ['alice@check.test', ['laptop'], 0, 'udp', '53', ['10.50.0.0/16']],
    ]);
    expect(doc.grants[0]).not.toHaveProperty('also');
    // Every grantee is an entry of the access delta that gains something.
    const entries = expandAccessDelta(doc.access_delta).entries.filter((e) => e.gained.length > 0);
    expect(entries.map((e) => ({ user: e.user, devices: e.devices }))).toEqual(doc.grantees);
  });

  it('fails when a rule set is given to another user: the new user of the rules, at the anchor', async () => {
    const repo = repository('adds', desired({ bobDb: true }));
    const r = await check(repo);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toContain('FAIL: 2 new grants');
    expect(r.stdout).toContain(
      '  bob@check.test (desk) → tcp 5432 to 10.20.0.0/16 (by accept 10.20.0.0/16 tcp 5432 (bob@check.test) at desired/netform.yaml:10)',
    );
    expect(r.stdout).toContain(
      '  bob@check.test (desk) → tcp 443 to 10.30.0.0/16 (by accept 10.30.0.0/16 tcp 443 (bob@check.test) at desired/netform.yaml:11)',
    );
    expect(r.stdout).not.toContain('alice@check.test (laptop) →');
  });

  it('fails when the pull request renews a grant that expired at the base: the base is judged as in effect too', async () => {
    const at = (expires: string) => `version: 1
users:
  - email: alice@check.test
    devices:
      - { name: laptop, public_key: "${ALICE}" }
    rules:
      - { action: accept, destination: 10.20.0.0/16, port_type: tcp, port_range: "5432", expires: "${expires}" }
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;
    const repo = ws.path('renews');
    ws.write('renews/desired/netform.yaml', at('2026-12-01'));
    git(ws.dir, 'init', '-q', '-b', 'main', repo);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    ws.write('renews/desired/netform.yaml', at('2027-06-30'));
    git(repo, 'commit', '-q', '-am', 'pr');
    const renewed = await check(repo, '--now', '2027-01-01');
    expect(renewed.code, describeResult(renewed)).toBe(1);
    expect(renewed.stdout).toContain('FAIL: 1 new grant');
    expect(renewed.stdout).toContain('alice@check.test (laptop) → tcp 5432 to 10.20.0.0/16');
    // Before the base's expiry both sides grant it: nothing new.
    const before = await check(repo, '--now', '2026-11-01');
    expect(before.code, describeResult(before)).toBe(0);
  });

  it('cannot evaluate an unknown ref or bad files: result error, exit 6', async () => {
    const repo = repository('errors', desired());
    const json = await netform(
      server,
      ['check', 'no-new-access', '--base', 'no-such-ref', '-f', 'desired/', '--format', 'json'],
      offline,
      repo,
    );
    expect(json.code, describeResult(json)).toBe(6);
    expect(JSON.parse(json.stdout)).toMatchObject({ check: 'no-new-access', result: 'error' });
    expect(JSON.parse(json.stdout).error).toContain('no-such-ref');
    ws.write('errors/desired/netform.yaml', 'version: 1\nusers: 3\n');
    const text = await check(repo);
    expect(text.code).toBe(6);
    expect(text.stderr).toMatch(
      /^check no-new-access could not be evaluated: the desired state has errors:\n {2}desired\/netform\.yaml:2/,
    );
    const neither = await netform(server, ['check', 'no-new-access', '-f', 'desired/'], offline, repo);
    expect(neither.code).toBe(6);
    expect(neither.stderr).toContain('give --base REF');
  });
});

describe('check no-new-access --live', () => {
  it('compares the server now with the state after apply of the files', async () => {
    const file = ws.write('live/netform.yaml', desired());
    const applied = await netform(server, ['apply', '-f', file, '--yes']);
    expect(applied.code, describeResult(applied)).toBe(0);
    const same = await netform(server, ['check', 'no-new-access', '--live', '-f', file]);
    expect(same.code, describeResult(same)).toBe(0);

    ws.write('live/netform.yaml', desired({ bobDb: true, web: false }));
    const r = await netform(server, ['check', 'no-new-access', '--live', '-f', file, '--format', 'json']);
    expect(r.code, describeResult(r)).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.subject).toBe('the server now → after apply of the files');
    expect(doc.access_delta.compared).toEqual({ before: 'the server now', after: 'after apply of the files' });
    expect(doc.grants.map((g: any) => `${g.user} ${g.protocol} ${g.ports} ${g.addresses} ${g.rule.line}`)).toEqual([
      'bob@check.test tcp 5432 10.20.0.0/16 10',
    ]);
    // What the server loses is named by the live rule's id: no file declares it any more.
    const lost: any = expandAccessDelta(doc.access_delta).entries.find((e) => e.user === 'alice@check.test')!.lost[0];
    expect(lost).toMatchObject({ addresses: ['10.30.0.0/16'], ports: '443' });
    expect(lost.before.id).toEqual(expect.any(String));
  });
});

describe('check no-access-to', () => {
  it('fails for whoever reaches the target outside --except, and passes with them excepted', async () => {
    const file = ws.write('invariant/netform.yaml', desired({ bobDb: true }));
    const r = await netform(server, ['check', 'no-access-to', '10.20.0.0/16:5432/tcp', '-f', file], offline);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toContain(
      'check no-access-to: FAIL: 2 grants reach 10.20.0.0/16:5432/tcp (against the declared rules)',
    );
    expect(r.stdout).toMatch(
      / {2}alice@check\.test \(laptop\) → tcp 5432 to 10\.20\.0\.0\/16 \(by accept .*netform\.yaml:10\)/,
    );

    const some = await netform(
      server,
      [
        'check',
        'no-access-to',
        '10.20.0.0/16:5432/tcp',
        '-f',
        file,
        '--except',
        'alice@check.test',
        '--format',
        'json',
      ],
      offline,
    );
    expect(some.code).toBe(1);
    expect(JSON.parse(some.stdout).grants.map((g: any) => g.user)).toEqual(['bob@check.test']);

    const none = await netform(
      server,
      ['check', 'no-access-to', '10.20.0.0/16:5432/tcp', '-f', file, '--except', 'alice@check.test,bob@*'],
      offline,
    );
    expect(none.code, describeResult(none)).toBe(0);
    expect(none.stdout).toContain('PASS: nobody outside alice@check.test, bob@* reaches 10.20.0.0/16:5432/tcp');

    // A block every rule drops: nobody reaches it; a port nobody is given: nobody either.
    expect((await netform(server, ['check', 'no-access-to', '10.40.0.0/16', '-f', file], offline)).code).toBe(0);
    expect((await netform(server, ['check', 'no-access-to', '10.20.0.0/16:22/tcp', '-f', file], offline)).code).toBe(0);

    const bad = await netform(
      server,
      ['check', 'no-access-to', '10.20.0.0/16:5432/sctp', '-f', file, '--format', 'json'],
      offline,
    );
    expect(bad.code).toBe(6);
    expect(JSON.parse(bad.stdout)).toMatchObject({ result: 'error' });
  });

  it('--live evaluates the server as it is', async () => {
    const file = ws.write('invariant-live/netform.yaml', desired());
    expect((await netform(server, ['apply', '-f', file, '--yes'])).code).toBe(0);
    const r = await netform(server, ['check', 'no-access-to', '10.30.0.0/16:443/tcp', '--live', '-f', file]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toContain('(against the server now)');
    expect(r.stdout).toMatch(
      /alice@check\.test \(laptop\) → tcp 443 to 10\.30\.0\.0\/16 \(by accept 10\.30\.0\.0\/16 tcp 443 \(alice@check\.test\) \(id /,
    );
    const after = await netform(server, ['check', 'no-access-to', '10.30.0.0/16:443/tcp', '--after-apply', '-f', file]);
    expect(after.code, describeResult(after)).toBe(1);
    expect(after.stdout).toContain('netform.yaml:11)');
  });
});
