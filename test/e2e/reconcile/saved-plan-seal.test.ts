/**
 * Sealed saved plans (security review F8; newcomer review 2.10), against a real server process:
 * an edited plan cannot be sealed again without the key (NETFORM_PLAN_KEY, or the API token), a
 * plan sealed under another key is refused saying why, and every secret a plan sends is the one it
 * was made with (the plan holds an HMAC of it, never the value).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server.js';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { PlanKey } from '../../../src/plan/seal.js';
import {
  describeResult,
  netform,
  serverState,
  wgKey,
  workspace,
  type Workspace,
  useServerAndWorkspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const PLAN_KEY = randomBytes(32).toString('base64');
/** Every secret value planted in this file, searched for in every plan file and output. */
const planted = new Map<string, string>([['PLAN_KEY', PLAN_KEY]]);
const outputs: { what: string; text: string }[] = [];

function plant(name: string, value: string): string {
  planted.set(name, value);
  return value;
}

/** netform in the workspace (no git: the workspace is the repository), its output kept for the leak check. */
async function run(what: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  const result = await netform(server, args, env, ws.dir);
  outputs.push({ what, text: result.stdout + result.stderr });
  return result;
}

/** A user (password from PW_<NAME>) with a laptop whose preshared key is desired/secrets/<name>.psk; planned into <name>.json. */
async function planned(
  name: string,
  env: Record<string, string | undefined> = {},
): Promise<{ path: string; email: string; psk: string; password: string; doc: any }> {
  const email = `${name}@seal.test`;
  const psk = plant(`${name} psk`, wgKey());
  const password = plant(`${name} password`, `pw-${randomBytes(12).toString('hex')}`);
  ws.write(`desired/secrets/${name}.psk`, `${psk}\n`);
  const file = ws.write(
    `desired/${name}.yaml`,
    `version: 1
settings:
  manage: { users: ["${email}"], rules: [] }
users:
  - email: ${email}
    password: { env: PW_${name.toUpperCase()} }
    devices:
      - { name: laptop, public_key: "${wgKey()}", preshared_key: { file: secrets/${name}.psk } }
`,
  );
  const path = ws.path(`${name}.json`);
  const result = await run(`plan ${name}`, ['plan', '-f', file, '-o', path], {
    [`PW_${name.toUpperCase()}`]: password,
    ...env,
  });
  expect(result.code, describeResult(result)).toBe(2);
  return { path, email, psk, password, doc: JSON.parse(readFileSync(path, 'utf8')) };
}

async function apply(
  what: string,
  path: string,
  password: string,
  name: string,
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return run(what, ['apply', path], { [`PW_${name.toUpperCase()}`]: password, ...env });
}

async function emails(): Promise<string[]> {
  return (await serverState(server)).users.map((u) => u.email);
}

const AGAIN = 'Nothing was changed; make it again with netform plan -f PATH -o PLANFILE';
const SHARE =
  'Plan and apply must share the API token or NETFORM_PLAN_KEY: give both the same token, or the same NETFORM_PLAN_KEY (for example, CI plan and apply jobs with different tokens). Nothing was changed';

describe('sealed saved plans', { timeout: 120_000 }, () => {
  let otherToken: string;
  beforeAll(async () => {
    // A second token of the same admin, as a CI apply job with its own token secret would have.
    const created = await runCli(['server', 'token', 'create', '--email', TEST_ADMIN_EMAIL, '--db', server.dbPath]);
    expect(created.code, describeResult(created)).toBe(0);
    otherToken = plant('other token', created.stdout.trim());
    plant('token', server.token);
  });

  afterAll(() => {
    // No plan file and no output holds a secret value, the token, or the plan key.
    const plans = readdirSync(ws.dir).filter((f) => f.endsWith('.json'));
    expect(plans.length).toBeGreaterThanOrEqual(8);
    const texts = [...outputs, ...plans.map((f) => ({ what: f, text: readFileSync(ws.path(f), 'utf8') }))];
    for (const { what, text } of texts)
      for (const [name, value] of planted) expect(text.includes(value), `${name} found in ${what}`).toBe(false);
  });

  it('F8: an edit with a recomputed digest is refused, whatever is recomputed, and nothing is written', async () => {
    const { path, email, password, doc } = await planned('tampered');
    expect(doc).toMatchObject({ format_version: 3, seal_key: { source: 'token' } });
    expect(doc.seal).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const outside = mkdtempSync(join(tmpdir(), 'netform-seal-outside-'));
    try {
      writeFileSync(join(outside, 'outside.key'), plant('outside key', wgKey()));
      // The review's edit: the user made admin while its fields show no role, the PSK read outside.
      const edit = (): any => {
        const plan = JSON.parse(JSON.stringify(doc));
        plan.changes.find((c: any) => c.kind === 'user').body.role = 'admin';
        plan.changes.find((c: any) => c.kind === 'device').secrets[0].ref = { file: 'outside.key', baseDir: outside };
        return plan;
      };
      const sha256 = (value: unknown) => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;

      // 1. Format 1's digest, recomputed, beside the old seal.
      const withDigest = edit();
      const { seal: _s1, ...rest1 } = withDigest;
      withDigest.digest = sha256(rest1);
      // 2. The seal replaced by a recomputed SHA-256.
      const digestAsSeal = edit();
      const { seal: _s2, ...rest2 } = digestAsSeal;
      digestAsSeal.seal = sha256(rest2);
      // 3. Downgraded to format 1 with its digest recomputed.
      const { seal: _s3, seal_key: _k3, ...downgraded } = edit();
      downgraded.format_version = 1;
      downgraded.digest = sha256(downgraded);
      // 4. Sealed again under a key of the attacker's, naming it (5: naming the plan's key).
      const attacker = PlanKey.from({ NETFORM_PLAN_KEY: randomBytes(32).toString('base64') }, () => '');
      const resealed = (keyInfo: unknown) => {
        const plan = edit();
        delete plan.seal;
        plan.seal_key = keyInfo;
        plan.seal = attacker.sealOf(canonicalJson(plan));
        return plan;
      };
      const cases: [string, unknown, string][] = [
        [
          'digest recomputed',
          withDigest,
          `the saved plan was modified after netform plan wrote it (its seal does not match). ${AGAIN}`,
        ],
        [
          'seal as a digest',
          digestAsSeal,
          'the saved plan was modified after netform plan wrote it (its seal does not match)',
        ],
        [
          'downgraded',
          downgraded,
          'the saved plan was made by an earlier netform (plan format version 1; this netform reads versions 2 and 3, which are sealed): plan again',
        ],
        [
          'another key',
          resealed(attacker.info()),
          `the saved plan was sealed under another key (it was made with NETFORM_PLAN_KEY, and this run has the API token (NETFORM_PLAN_KEY is not set)). ${SHARE}`,
        ],
        [
          'forged key id',
          resealed(doc.seal_key),
          'the saved plan was modified after netform plan wrote it (its seal does not match)',
        ],
      ];
      for (const [i, [what, plan, message]] of cases.entries()) {
        const tampered = ws.path(`t${i + 1}.json`);
        writeFileSync(tampered, JSON.stringify(plan, null, 2));
        const refused = await apply(`apply ${what}`, tampered, password, 'tampered');
        expect(refused.code, `${what}\n${describeResult(refused)}`).toBe(1);
        expect(refused.stderr, what).toContain(`error: ${tampered}: ${message}`);
        expect(refused.stdout, what).toBe('');
      }
      expect(await emails()).not.toContain(email);

      // The plan as written is applied, with the PSK from the repository.
      const applied = await apply('apply untampered', path, password, 'tampered');
      expect(applied.code, describeResult(applied)).toBe(0);
      const state = await serverState(server);
      expect(state.users.find((u) => u.email === email)?.role).toBe('unprivileged');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('F8: a __proto__ member added, or a secret base folder changed, is refused', async () => {
    const { email, password, doc } = await planned('proto');
    const protoPath = ws.path('proto-added.json');
    writeFileSync(
      protoPath,
      JSON.stringify(doc, null, 2).replace('"body": {', '"body": {\n"__proto__": { "role": "admin" },'),
    );
    const proto = await apply('apply __proto__', protoPath, password, 'proto');
    expect(proto.code, describeResult(proto)).toBe(1);
    expect(proto.stderr).toMatch(
      /error: .*proto-added\.json: the saved plan has a member named __proto__ \(in changes\[\d\]\.body\), which netform never writes; it was edited by hand\. Nothing was changed/,
    );

    const moved = JSON.parse(JSON.stringify(doc));
    const secret = moved.changes.find((c: any) => c.kind === 'device').secrets[0];
    // The folder the plan was made from (relative to where it was made); apply resolves it where it runs.
    expect(secret.ref).toEqual({ file: 'secrets/proto.psk', baseDir: 'desired' });
    secret.ref.baseDir = 'desired/elsewhere';
    const movedPath = ws.path('proto-moved.json');
    writeFileSync(movedPath, JSON.stringify(moved, null, 2));
    const refused = await apply('apply base folder moved', movedPath, password, 'proto');
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(`error: ${movedPath}: the saved plan was modified after netform plan wrote it`);
    expect(await emails()).not.toContain(email);
  });

  it('needs the same token, or the same NETFORM_PLAN_KEY, for plan and apply', async () => {
    const byToken = await planned('bytoken');
    const otherTokenRefused = await apply('apply other token', byToken.path, byToken.password, 'bytoken', {
      NETFORM_TOKEN: otherToken,
    });
    expect(otherTokenRefused.code, describeResult(otherTokenRefused)).toBe(1);
    expect(otherTokenRefused.stderr).toBe(
      `error: ${byToken.path}: the saved plan was sealed under another key (it was made with another API token). ${SHARE}\n`,
    );
    const keyRefused = await apply('apply key, plan by token', byToken.path, byToken.password, 'bytoken', {
      NETFORM_PLAN_KEY: PLAN_KEY,
    });
    expect(keyRefused.code, describeResult(keyRefused)).toBe(1);
    expect(keyRefused.stderr).toContain('(it was made with the API token, and this run has NETFORM_PLAN_KEY set)');
    expect(await emails()).not.toContain(byToken.email);

    // CI: plan and apply jobs with different tokens and one NETFORM_PLAN_KEY.
    const byKey = await planned('bykey', { NETFORM_PLAN_KEY: PLAN_KEY });
    expect(byKey.doc.seal_key.source).toBe('NETFORM_PLAN_KEY');
    const noKey = await apply('apply without the key', byKey.path, byKey.password, 'bykey', {
      NETFORM_TOKEN: otherToken,
    });
    expect(noKey.code, describeResult(noKey)).toBe(1);
    expect(noKey.stderr).toContain(
      '(it was made with NETFORM_PLAN_KEY, and this run has the API token (NETFORM_PLAN_KEY is not set))',
    );
    const wrongKey = await apply('apply another key', byKey.path, byKey.password, 'bykey', {
      NETFORM_PLAN_KEY: randomBytes(32).toString('base64'),
    });
    expect(wrongKey.code, describeResult(wrongKey)).toBe(1);
    expect(wrongKey.stderr).toContain('(it was made with another NETFORM_PLAN_KEY)');
    expect(await emails()).not.toContain(byKey.email);

    const accepted = await apply('apply same key, other token', byKey.path, byKey.password, 'bykey', {
      NETFORM_TOKEN: otherToken,
      NETFORM_PLAN_KEY: PLAN_KEY,
    });
    expect(accepted.code, describeResult(accepted)).toBe(0);
    const state = await serverState(server);
    const user = state.users.find((u) => u.email === byKey.email);
    expect(state.devices.find((d) => d.user_id === user?.id)?.preshared_key).toBe(byKey.psk);

    const short = await run(
      'plan with a short key',
      ['plan', '-f', ws.path('desired/bykey.yaml'), '-o', ws.path('short.json')],
      {
        NETFORM_PLAN_KEY: 'too-short',
        PW_BYKEY: byKey.password,
      },
    );
    expect(short.code, describeResult(short)).toBe(1);
    expect(short.stderr).toBe(
      'error: NETFORM_PLAN_KEY is too short to seal saved plans: it must have at least 32 characters (make one with: openssl rand -base64 32)\n',
    );
  });

  it('2.10: a secret changed since the plan makes it stale (exit 4, nothing written); unchanged, it is applied', async () => {
    const { path, email, psk, password, doc } = await planned('rotated');
    // The plan holds each secret's reference and an HMAC, never its value.
    const secrets = doc.changes.flatMap((c: any) => c.secrets ?? []);
    expect(secrets.map((s: any) => [s.field, Object.keys(s).sort()])).toEqual([
      ['password', ['at', 'field', 'hmac', 'ref']],
      ['preshared_key', ['at', 'field', 'hmac', 'ref']],
    ]);

    ws.write('desired/secrets/rotated.psk', `${plant('rotated psk 2', wgKey())}\n`);
    const pskChanged = await apply('apply psk changed', path, password, 'rotated');
    expect(pskChanged.code, describeResult(pskChanged)).toBe(4);
    expect(pskChanged.stderr).toBe(
      `The saved plan is stale: a secret it sends changed since it was made. Nothing was changed.
  - device ${email}/laptop: its preshared_key (file:secrets/rotated.psk) changed since the plan was made
Run netform plan again.
`,
    );
    const passwordChanged = await apply(
      'apply password changed',
      path,
      plant('rotated pw 2', 'pw-changed-1234'),
      'rotated',
    );
    expect(passwordChanged.code, describeResult(passwordChanged)).toBe(4);
    expect(passwordChanged.stderr).toContain(
      `  - user ${email}: its password (env:PW_ROTATED) changed since the plan was made\n`,
    );
    expect(await emails()).not.toContain(email);

    ws.write('desired/secrets/rotated.psk', `${psk}\n`);
    const applied = await apply('apply unchanged', path, password, 'rotated');
    expect(applied.code, describeResult(applied)).toBe(0);
    const state = await serverState(server);
    const user = state.users.find((u) => u.email === email);
    expect(state.devices.find((d) => d.user_id === user?.id)?.preshared_key).toBe(psk);
  });
});

describe('sealed saved plans with --embedded', { timeout: 60_000 }, () => {
  const local = workspace();
  afterAll(() => local.cleanup());
  const NO_SERVER = { NETFORM_URL: undefined, NETFORM_TOKEN: undefined, NETFORM_TOKEN_USER: undefined };

  it('are sealed with the embedded server token', async () => {
    const file = local.write('netform.yaml', 'version: 1\nusers:\n  - email: embedded@seal.test\n');
    const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
      runCli(args, { cwd: local.dir, env: { ...NO_SERVER, ...env } });
    const planned = await cli(['plan', '--embedded', '-f', file, '-o', 'plan.json']);
    expect(planned.code, describeResult(planned)).toBe(2);
    const doc = JSON.parse(readFileSync(local.path('plan.json'), 'utf8'));
    expect(doc.seal_key.source).toBe('embedded-token');
    const token = readFileSync(local.path('.netform/embedded.db.token'), 'utf8').trim();
    expect(JSON.stringify(doc)).not.toContain(token);

    const withKey = await cli(['apply', 'plan.json', '--embedded'], { NETFORM_PLAN_KEY: PLAN_KEY });
    expect(withKey.code, describeResult(withKey)).toBe(1);
    expect(withKey.stderr).toContain(
      "(it was made with the embedded server's token, and this run has NETFORM_PLAN_KEY set)",
    );
    const otherDb = await cli(['apply', 'plan.json', '--embedded', 'other.db']);
    expect(otherDb.code, describeResult(otherDb)).toBe(1);
    expect(otherDb.stderr).toContain('the embedded server has no token');
    const applied = await cli(['apply', 'plan.json', '--embedded']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stdout).toContain('created user embedded@seal.test');
  });
});
