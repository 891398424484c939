/**
 * `netform migrate firezone-1x` as an operation: the 0.7 state (the files; the live server now;
 * or the files planned against the server, the state after apply) compiled into Firezone 1.x
 * objects with the per-user comparison (src/migrate). Reads only: nothing is written to any
 * server. Returns the Terraform JSON text and the migration; the command writes the files.
 */
import { accessModelOfDesired, accessModelOfLive, accessSettingsOf, type AccessModel } from '../access/index.js';
import type { EvaluatedState } from '../access/after-apply.js';
import { userKey } from '../model/keys.js';
import type { DesiredState, LiveState } from '../model/state.js';
import {
  CHANGELOG_COMMIT,
  checkResources,
  compileMigration,
  FILTER_ROUTING_CLIENTS,
  PROVIDER_COMMIT,
  UPSTREAM_COMMIT,
  secondsFor,
  terraformDocument,
  documentText,
  type DeviceFacts,
  type MigrateInput,
  type MigrateOptions,
  type Migration,
  type ResourceBody,
} from '../migrate/index.js';
import { expiringOf } from '../migrate/expiring.js';
import { evaluatedState, modelFor, type AccessSource } from './access.js';
import { loadDesired, loaderFor } from './desired.js';
import { OpError } from './errors.js';
import { elapsedSince, type OpEvents } from './events.js';
import { readLiveState } from './session.js';

export interface MigrateRequest extends AccessSource {
  options: MigrateOptions;
  /** The 1.x Site's name (default `netform`). */
  siteName?: string;
}

export interface MigrateCounts {
  sites: number;
  actors: number;
  groups: number;
  memberships: number;
  resources: number;
  policies: number;
  total: number;
}

export interface MigrateResult {
  state: EvaluatedState;
  migration: Migration;
  /** `main.tf.json`'s bytes. */
  terraform: string;
  counts: MigrateCounts;
  /** Seconds to create every object, and to refresh them on each later plan, under the API's rate limit. */
  seconds: { apply: number; refresh: number };
  /** What the 1.x side was read from (src/migrate/facts.ts). */
  facts: {
    upstreamCommit: string;
    providerCommit: string;
    /** The client changelogs' commit (firezone#12684's first versions). */
    changelogCommit: string;
    clients: readonly { platform: string; version: string; date: string }[];
  };
}

/** Devices with what the files or the server know of them: allowed_ips (declared), last handshake (live). */
function devicesOfDesired(desired: DesiredState): Map<string, DeviceFacts[]> {
  const out = new Map<string, DeviceFacts[]>();
  for (const user of desired.users)
    out.set(
      userKey(user.email),
      user.devices.map((d) => {
        const allowed = (d.fields as { allowed_ips?: string[] | null }).allowed_ips;
        return { name: d.name, ...(allowed ? { allowedIps: [...allowed] } : {}) };
      }),
    );
  return out;
}

function devicesOfLive(live: LiveState): Map<string, DeviceFacts[]> {
  const emailOf = new Map(live.users.map((u) => [u.id, userKey(u.email)]));
  const out = new Map<string, DeviceFacts[]>();
  for (const d of live.devices) {
    const key = emailOf.get(d.user_id);
    if (key === undefined) continue;
    const list = out.get(key) ?? [];
    const facts: DeviceFacts = { name: d.name, lastHandshake: d.latest_handshake };
    if (!d.use_default_allowed_ips && d.allowed_ips) facts.allowedIps = [...d.allowed_ips];
    list.push(facts);
    out.set(key, list);
  }
  return out;
}

async function readSource(
  request: MigrateRequest,
  events: OpEvents,
): Promise<{ model: AccessModel; desired?: DesiredState; devices?: Map<string, DeviceFacts[]> }> {
  const desired = request.file ? await loadDesired(request.file, events, loaderFor(request.input)) : undefined;
  if (request.live && !request.afterApply) {
    const session = await request.live.open();
    try {
      const started = performance.now();
      const live = await readLiveState(session);
      events.phase?.('fetch', elapsedSince(started));
      const model = accessModelOfLive(live, desired ? accessSettingsOf(desired) : undefined);
      return { model, devices: devicesOfLive(live) };
    } finally {
      await session.close();
    }
  }
  if (request.live) {
    const model = await modelFor(request.live, desired, events, { repository: false });
    return { model, ...(desired ? { desired, devices: devicesOfDesired(desired) } : {}) };
  }
  if (!desired) throw new OpError('request', { code: 'migrate_needs_source' });
  return { model: accessModelOfDesired(desired), desired, devices: devicesOfDesired(desired) };
}

/**
 * What the compiler reads, and nothing more: the desired state (its positions and documents) is
 * not referenced past this point, so the collector can free it while the compiler runs.
 */
async function compileInputOf(request: MigrateRequest, events: OpEvents): Promise<MigrateInput> {
  const source = await readSource(request, events);
  return {
    model: source.model,
    options: request.options,
    ...(source.devices ? { devices: source.devices } : {}),
    expiring: expiringOf(source.desired),
  };
}

export function countsOf(migration: Migration): MigrateCounts {
  const counts = {
    sites: 1,
    actors: migration.actors.length,
    groups: migration.groups.filter((g) => g.everyone === undefined).length,
    memberships: migration.memberships.length,
    resources: migration.resources.length,
    policies: migration.policies.length,
  };
  return { ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** Compiles the state into 1.x objects; refuses (a bug, never expected) when the portal would refuse an emitted Resource. */
export async function migrateToFirezone1x(request: MigrateRequest, events: OpEvents = {}): Promise<MigrateResult> {
  const input = await compileInputOf(request, events);
  const started = performance.now();
  const migration = compileMigration(input);
  events.phase?.('evaluate', elapsedSince(started));
  const siteName = request.siteName ?? 'netform';
  const document = terraformDocument(migration, siteName);
  const problems = checkResources(
    (document.resource as { firezone_resource?: Record<string, ResourceBody> }).firezone_resource ?? {},
  );
  if (problems.length > 0)
    throw new OpError('request', {
      code: 'migrate_portal_refuses',
      count: problems.length,
      problems: problems.slice(0, 3).map((p) => `${p.address}: ${p.problem}`),
    });
  return migrateResult(evaluatedState(request), migration, siteName, document);
}

/** What a migration comes to for the views: its Terraform text, its counts and durations, the recorded facts. */
export function migrateResult(
  state: MigrateResult['state'],
  migration: Migration,
  siteName: string,
  document: Record<string, unknown> = terraformDocument(migration, siteName),
): MigrateResult {
  const counts = countsOf(migration);
  return {
    state,
    migration,
    terraform: documentText(document),
    counts,
    seconds: { apply: secondsFor(counts.total), refresh: secondsFor(counts.total) },
    facts: {
      upstreamCommit: UPSTREAM_COMMIT,
      providerCommit: PROVIDER_COMMIT,
      changelogCommit: CHANGELOG_COMMIT,
      clients: FILTER_ROUTING_CLIENTS,
    },
  };
}
