/**
 * The second layer of checks on main.tf.json: the request bodies the official provider would send
 * for each emitted object, validated (Ajv) against the 1.x API's own request schemas, transcribed
 * from upstream's OpenAPI document (test/fixtures/migrate/openapi-request-bodies.json, with its
 * commit). The provider-schema fixture checks the Terraform side; this checks what reaches the API.
 *
 * From a Terraform resource to its body, as the provider (firezone/terraform-provider-firezone,
 * internal/provider/resource_*.go) and its client (firezone/firezone-go, the request structs'
 * JSON tags) build it: every create wraps its object in one key (`site`, `actor`, `group`,
 * `resource`, `policy`); empty optional strings and empty lists are left out (`omitempty`);
 * an actor always carries `allow_email_otp_sign_in` (false by default) and a disabled one is
 * disabled by a second request without a body; a membership is a PATCH adding one actor; a
 * policy always carries `flow_log_uploads_enabled`. `${firezone_x.y.id}` references are the ids
 * the API returns: UUIDs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  defaultAccessSettings,
  type AccessModel,
  type AccessRule,
  type AccessUser,
} from '../../../src/access/model.js';
import { compileMigration } from '../../../src/migrate/compile.js';
import { terraformDocument } from '../../../src/migrate/terraform.js';
import type { MigrateOptions } from '../../../src/migrate/types.js';
import { seeded } from '../../helpers/seeded.js';

const FIXTURE = JSON.parse(
  readFileSync(new URL('../../fixtures/migrate/openapi-request-bodies.json', import.meta.url), 'utf8'),
) as { commit: string; requests: Record<string, string>; components: unknown };
const GOLDEN = JSON.parse(
  readFileSync(new URL('../../fixtures/migrate/basic.main.tf.json', import.meta.url), 'utf8'),
) as TerraformDoc;

type TerraformDoc = { resource: Record<string, Record<string, Record<string, unknown>>> };

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
ajv.addSchema({ $id: 'openapi', components: FIXTURE.components });
const validators = new Map<string, ValidateFunction>();
function validatorOf(request: string): ValidateFunction {
  let v = validators.get(request);
  if (!v) {
    const schema = FIXTURE.requests[request];
    if (!schema) throw new Error(`no request schema for ${request}`);
    validators.set(request, (v = ajv.compile({ $ref: `openapi#/components/schemas/${schema}` })));
  }
  return v;
}

/** The id the API would return for a referenced object: a UUID made from the reference. */
function idOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const m = /^\$\{(firezone_[a-z_]+\.[A-Za-z0-9_]+)\.id\}$/.exec(value);
  if (!m) return value;
  const h = createHash('sha256').update(m[1]!).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Left out when empty, as the client's `omitempty` JSON tags do. */
function compact(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body))
    if (v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)) out[k] = v;
  return out;
}

interface Body {
  address: string;
  request: string;
  body: unknown;
}

/** The request bodies creating every object of a main.tf.json (and updating each Resource). */
export function requestBodies(doc: TerraformDoc): Body[] {
  const out: Body[] = [];
  const each = (type: string, fn: (name: string, attrs: Record<string, unknown>) => void) => {
    for (const [name, attrs] of Object.entries(doc.resource[type] ?? {})) fn(name, attrs);
  };
  each('firezone_site', (name, a) =>
    out.push({ address: `firezone_site.${name}`, request: 'POST /sites', body: { site: compact({ name: a.name }) } }),
  );
  each('firezone_actor', (name, a) =>
    out.push({
      address: `firezone_actor.${name}`,
      request: 'POST /actors',
      body: {
        actor: {
          ...compact({ name: a.name, type: a.type, email: a.email }),
          allow_email_otp_sign_in: a.allow_email_otp_sign_in ?? false,
        },
      },
    }),
  );
  each('firezone_group', (name, a) =>
    out.push({
      address: `firezone_group.${name}`,
      request: 'POST /groups',
      body: { group: compact({ name: a.name }) },
    }),
  );
  each('firezone_group_membership', (name, a) =>
    out.push({
      address: `firezone_group_membership.${name}`,
      request: 'PATCH /groups/{group_id}/memberships',
      body: { memberships: { add: [idOf(a.actor_id)] } },
    }),
  );
  each('firezone_resource', (name, a) => {
    const filters = ((a.filters as { protocol: string; ports?: string[] }[] | undefined) ?? []).map((f) =>
      compact({ protocol: f.protocol, ports: f.ports }),
    );
    const resource = compact({
      name: a.name,
      type: a.type,
      address: a.address,
      address_description: a.address_description,
      ip_stack: a.ip_stack,
      site_id: idOf(a.site_id),
      filters,
    });
    out.push({ address: `firezone_resource.${name}`, request: 'POST /resources', body: { resource } });
    out.push({ address: `firezone_resource.${name}`, request: 'PUT /resources/{id}', body: { resource } });
  });
  each('firezone_policy', (name, a) =>
    out.push({
      address: `firezone_policy.${name}`,
      request: 'POST /policies',
      body: {
        policy: {
          ...compact({ group_id: idOf(a.group_id), resource_id: idOf(a.resource_id), description: a.description }),
          flow_log_uploads_enabled: a.flow_log_uploads_enabled ?? true,
        },
      },
    }),
  );
  return out;
}

/** Bodies the API's schemas refuse, with Ajv's reason. */
function refused(doc: TerraformDoc): string[] {
  const out: string[] = [];
  for (const { address, request, body } of requestBodies(doc)) {
    const validate = validatorOf(request);
    if (!validate(body))
      out.push(
        `${address} (${request}): ${(validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`).join('; ')}`,
      );
  }
  return out;
}

function fleet(seed: number): AccessModel {
  const r = seeded(seed);
  const blocks = [
    '10.1.0.0/16',
    '10.1.2.0/24',
    '10.1.2.7',
    '192.168.1.0/24',
    '172.16.0.0/12',
    'fd01::/64',
    '10.9.0.0/16',
  ];
  const ports = ['22', '80', '443', '8000-8999', '1-1024', '53', '0', '65535', '1-65535'];
  const one = (owner: string | null): AccessRule => ({
    owner,
    action: r.pick(['accept', 'drop'] as const),
    destination: r.pick(blocks),
    ...(r.chance(0.5)
      ? { port_type: null, port_range: null }
      : { port_type: r.pick(['tcp', 'udp'] as const), port_range: r.pick(ports) }),
  });
  const users = new Map<string, AccessUser>();
  const rules: AccessRule[] = Array.from({ length: r.int(1, 6) }, () => one(null));
  for (let i = 0; i < r.int(2, 8); i++) {
    const email = `person.${i}@example.com`;
    users.set(email, {
      key: email,
      email,
      devices: [{ name: 'laptop' }],
      ...(i === 1 ? { noTunnel: 'disabled' as const } : {}),
    });
    for (let k = r.int(0, 3); k > 0; k--) rules.push(one(email));
  }
  return { users, rules, settings: defaultAccessSettings() };
}

const EVERYONE = '0b6f3c1e-2d4a-4f5b-9c8d-7e6f5a4b3c2d';
const OPTIONS: MigrateOptions[] = [
  { prefer: 'narrower', assumeFilterRouting: false },
  { prefer: 'wider', assumeFilterRouting: false },
  { prefer: 'narrower', assumeFilterRouting: true },
  { prefer: 'narrower', assumeFilterRouting: false, everyoneGroup: EVERYONE },
];

describe(`main.tf.json's request bodies against the 1.x OpenAPI schemas (firezone/firezone ${FIXTURE.commit.slice(0, 8)})`, () => {
  it('the golden main.tf.json: every object created, every Resource updated, with a body the API accepts', () => {
    const bodies = requestBodies(GOLDEN);
    expect(new Set(bodies.map((b) => b.request))).toEqual(new Set(Object.keys(FIXTURE.requests)));
    expect(refused(GOLDEN)).toEqual([]);
  });

  it('seeded states, every option: every body accepted', () => {
    for (let seed = 1; seed <= 6; seed++)
      for (const options of OPTIONS) {
        const doc = terraformDocument(compileMigration({ model: fleet(seed), options }), 'netform') as TerraformDoc;
        expect(refused(doc), `seed ${seed} ${JSON.stringify(options)}`).toEqual([]);
      }
  });

  it('the layer refuses what the API would: a filter protocol it lacks, ports as numbers, a missing type, a group id that is no UUID', () => {
    const doc = structuredClone(GOLDEN);
    const resources = doc.resource.firezone_resource!;
    const [first, second, third] = Object.keys(resources);
    resources[first!]!.filters = [{ protocol: 'gre' }];
    resources[second!]!.filters = [{ protocol: 'tcp', ports: [22] }];
    delete resources[third!]!.type;
    const policy = Object.values(doc.resource.firezone_policy!)[0]!;
    policy.group_id = 'everyone-id';
    const problems = refused(doc);
    expect(
      problems.some((p) =>
        p.startsWith(
          `firezone_resource.${first} (POST /resources): /resource/filters/0/protocol must be equal to one of the allowed values`,
        ),
      ),
    ).toBe(true);
    expect(
      problems.some((p) =>
        p.startsWith(`firezone_resource.${second} (POST /resources): /resource/filters/0/ports/0 must be string`),
      ),
    ).toBe(true);
    expect(
      problems.some((p) =>
        p.startsWith(`firezone_resource.${third} (POST /resources): /resource must have required property 'type'`),
      ),
    ).toBe(true);
    expect(
      problems.some((p) =>
        /^firezone_policy\.\S+ \(POST \/policies\): \/policy\/group_id must match format "uuid"/.test(p),
      ),
    ).toBe(true);
  });

  it("an actor's name must hold a letter followed by a letter, digit or _ (the schema's unanchored pattern): emails do, a bare 'x@y.z' does not", () => {
    const validate = validatorOf('POST /actors');
    const actor = (name: string) => ({
      actor: { name, type: 'account_user', email: name, allow_email_otp_sign_in: false },
    });
    expect(validate(actor('jo.smith@example.com'))).toBe(true);
    expect(validate(actor('x@y.z'))).toBe(false);
  });
});
