/**
 * applyPlan: executes a Plan through the /v0 client (docs/netform.md section 4).
 * - Phases in order (users; changes that make room; devices and rules; their deletions; user
 *   deletions and demotions); within a phase, up to `parallelism` writes at once.
 * - Before writing an object, it is read again: one changed by someone else since the plan is not
 *   overwritten.
 * - A failed write does not stop unrelated ones; changes that depend on it are not attempted.
 * - A rule is never updated in place: a rule replacement is a delete, then a create.
 * - Before the first device update of fields a Firezone 0.7.26+ server ignores, one harmless probe
 *   asks whether this server does; if so, device updates are not attempted (the rest proceeds).
 * - After each write, the answer is compared with what was asked (a second line of defence).
 * - Secrets are resolved from their references at the moment they go into a request body.
 */
import { ApiError, type ApiClient } from '../client/index.js';
import { normalizeDestination, userKey } from '../model/keys.js';
import { Messages } from '../model/messages.js';
import { normalizePortRange } from '../model/ports.js';
import type { SecretRef } from '../model/secret.js';
import type { ApiDevice, ApiRule, ApiUser } from '../model/types.js';
import {
  isDefaultableField,
  isLegacyUpdatable,
  isWritableDeviceField,
  useDefaultFlag,
} from '../model/device-fields.js';
import { liveDeviceBody, sameDeviceValue } from '../plan/device-fields.js';
import { fingerprintOf } from '../plan/fingerprint.js';
import type { Change, ObjectKind, Plan, ResourceKind } from '../plan/types.js';
import { applyConfigurationChange } from './configuration.js';

export type ChangeStatus = 'done' | 'failed' | 'not_attempted';

export interface ChangeResult {
  id: string;
  label: string;
  action: Change['action'];
  status: ChangeStatus;
  /** Why it failed or was not attempted, or a remark on a done change. */
  message?: string;
  /** Why apply did not start it or does not know its outcome, as a code (instead of `message`; a view words it). */
  stop?: WriteStop;
}

/**
 * Why apply stopped a write, as a code and its values (src/views/ops-apply.ts words it): it was
 * interrupted (`by`: what stopped it, such as `SIGINT`), the server went away (`reason`: the
 * breaker's words), or the write was still in flight when apply stopped waiting for it.
 */
export type WriteStop =
  { code: 'interrupted'; by?: string } | { code: 'server_gone'; reason: string } | { code: 'in_flight_unknown' };

export interface ApplySummary {
  results: ChangeResult[];
  done: number;
  failed: number;
  notAttempted: number;
}

export interface ApplyProgress {
  settled: number;
  total: number;
  failed: number;
}

export interface ApplyOptions {
  client: ApiClient;
  /** Writes at once. Default 8. */
  parallelism?: number;
  /** The value of a secret reference, read at apply time (saved plans hold only references). */
  resolveSecret: (ref: SecretRef) => string;
  onProgress?: (progress: ApplyProgress) => void;
  /** Told when a write starts (after waiting for a slot). */
  onStart?: (change: Change) => void;
  /** Told when each change settles, with how long its write took and the error behind a failure. */
  onSettled?: (result: ChangeResult, detail: { ms: number; error?: unknown }) => void;
  /**
   * Asked before each write starts: a reason stops it (recorded as not attempted with that reason);
   * null lets it go. How an interrupt or a server that went away stops new writes.
   */
  shouldStart?: () => string | WriteStop | null;
}

const COLLECTION = { user: 'users', device: 'devices', rule: 'rules' } as const satisfies Record<ObjectKind, string>;

/** A failure of one change, with a message fit for the summary. */
class ChangeFailure extends Error {}

/** A change deliberately not made (the server showed it would be unsafe); reported, not failed. */
class SkippedChange extends Error {}

type LiveObject = ApiUser | ApiDevice | ApiRule;

export async function applyPlan(plan: Plan, options: ApplyOptions): Promise<ApplySummary> {
  const parallelism = Math.max(1, options.parallelism ?? 8);
  const client = options.client;
  const results = new Map<string, ChangeResult>();
  const createdIds = new Map<string, string>();
  const phaseOf = new Map(plan.changes.map((c) => [c.id, c.phase]));

  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = () =>
    active < parallelism ? (active++, Promise.resolve()) : new Promise<void>((resolve) => waiting.push(resolve));
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };

  let settledCount = 0;
  let failedCount = 0;
  const record = (
    change: Change,
    status: ChangeStatus,
    message?: string | WriteStop,
    detail: { ms: number; error?: unknown } = { ms: 0 },
  ) => {
    const result: ChangeResult = {
      id: change.id,
      label: change.label,
      action: change.action,
      status,
      ...(typeof message === 'object' ? { stop: message } : message ? { message } : {}),
    };
    results.set(change.id, result);
    settledCount++;
    if (status === 'failed') failedCount++;
    options.onSettled?.(result, detail);
    options.onProgress?.({ settled: settledCount, total: plan.changes.length, failed: failedCount });
  };

  const byPhase = new Map<number, Change[]>();
  for (const change of plan.changes) {
    const list = byPhase.get(change.phase);
    if (list) list.push(change);
    else byPhase.set(change.phase, [change]);
  }

  const context: ExecutionContext = {
    client,
    createdIds,
    resolveSecret: options.resolveSecret,
    deviceFieldsIgnored: null,
  };
  const halfMade = halfMadeUsers(plan, results, createdIds, client);
  const run = async (change: Change): Promise<void> => {
    // A phase starts when the earlier ones have settled, so every dependency has an outcome.
    const deps = (change.dependsOn ?? []).filter((id) => phaseOf.has(id));
    const unordered = deps.filter((id) => phaseOf.get(id)! >= change.phase);
    if (unordered.length > 0) {
      record(change, 'failed', `the plan orders it before ${unordered.join(', ')}, which it depends on`);
      return;
    }
    const blocked = deps.filter((id) => results.get(id)!.status !== 'done');
    if (blocked.length > 0) {
      record(
        change,
        'not_attempted',
        `depends on ${blocked.map((id) => results.get(id)!.label).join(', ')}, which did not succeed`,
      );
      return;
    }
    const withoutDevice = await halfMade(change);
    if (withoutDevice !== null) {
      record(change, 'not_attempted', withoutDevice);
      return;
    }
    await acquire();
    const stop = options.shouldStart?.() ?? null;
    if (stop !== null) {
      release();
      record(change, 'not_attempted', stop);
      return;
    }
    options.onStart?.(change);
    const started = Date.now();
    try {
      const remark = await executeChange(change, context);
      record(change, 'done', remark, { ms: Date.now() - started });
    } catch (error) {
      record(change, error instanceof SkippedChange ? 'not_attempted' : 'failed', failureMessage(error), {
        ms: Date.now() - started,
        error,
      });
    } finally {
      release();
    }
  };
  for (const phase of [...byPhase.keys()].sort((a, b) => a - b)) {
    // A user's devices before its rules: an accept rule of a user whose new devices all failed waits.
    const changes = byPhase.get(phase)!;
    await Promise.all(changes.filter((c) => c.kind !== 'rule').map(run));
    await Promise.all(changes.filter((c) => c.kind === 'rule').map(run));
  }

  return applySummary(plan.changes.map((c) => results.get(c.id)!));
}

/**
 * Whether a change is a new accept rule of a user this apply would leave half made: every new
 * device of the user in the plan did not succeed, and the user has no device on the server (one
 * created by this apply has none). Returns why it is skipped, or null. Drops, deletions and
 * replacements always go ahead: they narrow access or were reviewed as such.
 */
function halfMadeUsers(
  plan: Plan,
  results: Map<string, ChangeResult>,
  createdIds: Map<string, string>,
  client: ApiClient,
): (change: Change) => Promise<string | null> {
  const newDevices = new Map<string, Change[]>();
  for (const change of plan.changes) {
    if (change.kind !== 'device' || change.action !== 'create') continue;
    const owner = JSON.stringify(change.body?.user_id ?? null);
    newDevices.set(owner, [...(newDevices.get(owner) ?? []), change]);
  }
  let liveOwners: Promise<Set<string>> | null = null;
  return async (change) => {
    if (change.kind !== 'rule' || change.action !== 'create' || change.body?.action !== 'accept') return null;
    const owner = change.body.user_id;
    if (owner === null || owner === undefined) return null;
    const devices = newDevices.get(JSON.stringify(owner)) ?? [];
    if (devices.length === 0 || devices.some((d) => results.get(d.id)?.status === 'done')) return null;
    const ref = typeof owner === 'object' && owner !== null && '$ref' in owner ? String(owner.$ref) : null;
    const id = ref === null ? String(owner) : createdIds.get(ref);
    if (id !== undefined && ref === null) {
      liveOwners ??= client.list('devices').then((list) => new Set(list.map((d) => d.user_id)));
      if ((await liveOwners).has(id)) return null;
    }
    const user = change.label.match(/\(([^()]*)\)$/)?.[1] ?? 'its user';
    return `skipped: every new device of ${user} failed and it has no other device, so its new accept rules wait (run apply again once a device is created)`;
  };
}

/** The outcome of an apply from the result of each change, in plan order. */
export function applySummary(results: ChangeResult[]): ApplySummary {
  return {
    results,
    done: results.filter((r) => r.status === 'done').length,
    failed: results.filter((r) => r.status === 'failed').length,
    notAttempted: results.filter((r) => r.status === 'not_attempted').length,
  };
}

function failureMessage(error: unknown): string {
  if (error instanceof ChangeFailure || error instanceof SkippedChange) return error.message;
  if (error instanceof ApiError) return error.message;
  // Secret resolution errors name the reference, never a value.
  return error instanceof Error ? error.message : String(error);
}

interface ExecutionContext {
  client: ApiClient;
  createdIds: Map<string, string>;
  resolveSecret: (ref: SecretRef) => string;
  /** Whether the server ignores device fields on update: asked once, before the first such update. */
  deviceFieldsIgnored: Promise<boolean> | null;
}

/** Performs one change; returns a remark for the summary, or throws why it failed. */
async function executeChange(change: Change, ctx: ExecutionContext): Promise<string | undefined> {
  if (change.kind === 'configuration') return applyConfigurationChange(change, ctx.client);
  const collection = COLLECTION[change.kind];
  if (change.action === 'create') {
    const body = withSecrets(change, resolveRefs(change.body ?? {}, ctx), ctx);
    const { resource, foundAfterRetry } = await createUnlessTaken(change, collection, body, ctx);
    ctx.createdIds.set(change.id, resource.id);
    verifyAnswer(change, body, resource, null);
    return foundAfterRetry ? 'created (the connection dropped; found on the server by its key)' : undefined;
  }

  const current = await freshObject(change, ctx);
  if (change.action === 'delete') {
    if (!current) return 'already gone';
    if (change.kind === 'user' && (current as ApiUser).role === 'admin') return deleteAdmin(current as ApiUser, ctx);
    await ctx.client.remove(collection, change.liveId!);
    return undefined;
  }
  if (!current) throw new ChangeFailure('deleted by someone else since the plan was made');

  if (change.action === 'update') {
    const ignorable =
      Object.keys(change.body ?? {}).some((f) => !isLegacyUpdatable(f)) || (change.secrets?.length ?? 0) > 0;
    if (change.kind === 'device' && ignorable) {
      ctx.deviceFieldsIgnored ??= serverIgnoresDeviceFields(current as ApiDevice, ctx);
      if (await ctx.deviceFieldsIgnored) throw new SkippedChange(IGNORED_DEVICE_FIELDS);
    }
    const body = withSecrets(change, { ...(change.body ?? {}) }, ctx);
    const answer = await ctx.client.update(collection, change.liveId!, body);
    verifyAnswer(change, body, answer, current);
    return undefined;
  }
  if (change.kind === 'rule') return replaceRule(change, current as ApiRule, ctx);
  return replaceDevice(change, current as ApiDevice, ctx);
}

/**
 * A rule is never changed in place (a real server's firewall ignores rule updates): delete the
 * live rule, then create the new one; on a failed create, put the old rule back.
 */
async function replaceRule(change: Change, current: ApiRule, ctx: ExecutionContext): Promise<string | undefined> {
  const body = resolveRefs(change.body ?? {}, ctx);
  await ctx.client.remove('rules', current.id);
  try {
    const { resource } = await ctx.client.create('rules', body);
    ctx.createdIds.set(change.id, resource.id);
    verifyAnswer(change, body, resource, null);
    return undefined;
  } catch (createError) {
    const original = {
      action: current.action,
      destination: current.destination,
      port_type: current.port_type,
      port_range: current.port_range,
      user_id: current.user_id,
    };
    try {
      await ctx.client.create('rules', original);
    } catch {
      throw new ChangeFailure(
        `the old rule was deleted, but creating the new one failed (${failureMessage(createError)}), and so did restoring the old one: run apply again`,
      );
    }
    throw new ChangeFailure(`creating the new rule failed (${failureMessage(createError)}); the old rule was put back`);
  }
}

/**
 * Deletes an admin only once the server has shown it does not own the API token: the admin is
 * demoted first, which both upstream 0.7.36 and our server refuse for the token's own user
 * (`You cannot change your own role`). A refusal skips the deletion; if the deletion then fails,
 * the admin role is given back, so the probe leaves nothing behind. Any other answer to the
 * demotion means the server cannot tell: the plan's --token-user guard already decided.
 */
async function deleteAdmin(admin: ApiUser, ctx: ExecutionContext): Promise<string | undefined> {
  let demoted = false;
  try {
    await ctx.client.update('users', admin.id, { role: 'unprivileged' });
    demoted = true;
  } catch (error) {
    if (error instanceof ApiError && (error.errors.role ?? []).includes(Messages.ownRole)) {
      throw new SkippedChange(
        'not deleted: the server refused to change its role because the API token in use belongs to it; ' +
          'check --token-user / NETFORM_TOKEN_USER, which names another admin',
      );
    }
    if (!(error instanceof ApiError) || error.status === null || error.status >= 500 || error.isUnauthorized)
      throw error;
  }
  try {
    await ctx.client.remove('users', admin.id);
  } catch (error) {
    if (demoted) await ctx.client.update('users', admin.id, { role: 'admin' }).catch(() => undefined);
    throw error;
  }
  return demoted ? undefined : 'the server could not tell whether it owns the token (--token-user decided)';
}

const IGNORED_DEVICE_FIELDS =
  'not attempted: this server ignores device fields other than name and description on update (Firezone 0.7.26 and later); ' +
  "add `device_updates: replace` to the files' settings to plan such changes as replacements that keep keys, addresses and preshared key";

/**
 * Asks the server, changing nothing, whether it ignores device fields on update: a PATCH that
 * carries only an invalid mtu is refused (422) by a server that validates it, and answered with
 * the device unchanged by one that ignores it. Should a server store the value, it is put back.
 */
async function serverIgnoresDeviceFields(device: ApiDevice, ctx: ExecutionContext): Promise<boolean> {
  let answer: ApiDevice;
  try {
    answer = await ctx.client.update('devices', device.id, { mtu: -1 });
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) return false;
    throw error;
  }
  if (answer.mtu === -1) {
    const flag = useDefaultFlag('mtu');
    await ctx.client.update('devices', device.id, { mtu: device.mtu, [flag]: device[flag] });
    return false;
  }
  return true;
}

/**
 * A create refused with 422 because the object now exists (a concurrent writer got there first)
 * gets a plain message, not the server's uniqueness or overlap text. The server's refusal is the
 * check: a create never overwrites (emails, device names and rules are unique on the server), so
 * no read is spent before each create to look for the object first.
 */
const TAKEN: Record<'users' | 'devices' | 'rules', string> = {
  users: 'a user with this email was created by someone else since the plan was made; not overwritten',
  devices: 'a device with this key was created by someone else since the plan was made; not overwritten',
  rules: 'a rule with this key was created by someone else since the plan was made; not overwritten',
};

async function createUnlessTaken(
  change: Change,
  collection: 'users' | 'devices' | 'rules',
  body: Record<string, unknown>,
  ctx: ExecutionContext,
) {
  try {
    return await ctx.client.create(collection, body);
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) {
      const existing = await ctx.client.findByKey(collection, body).catch(() => null);
      if (existing) throw new ChangeFailure(TAKEN[collection]);
    }
    throw error;
  }
}

/** The live object as it is now; a failure when it changed since the plan saw it. */
async function freshObject(change: Change, ctx: ExecutionContext): Promise<LiveObject | null> {
  const current = await ctx.client.find(COLLECTION[change.kind as ObjectKind], change.liveId!);
  if (current && change.fingerprint && fingerprintOf(change.kind, current) !== change.fingerprint) {
    throw new ChangeFailure('changed by someone else since the plan was made; not overwritten (run plan again)');
  }
  return current;
}

/** Delete then create with the same keys and addresses; on a failed create, put the original back. */
async function replaceDevice(change: Change, current: ApiDevice, ctx: ExecutionContext): Promise<string | undefined> {
  const body = withSecrets(change, resolveRefs(change.body ?? {}, ctx), ctx);
  for (const field of change.keepFromLive ?? []) {
    const value = (current as unknown as Record<string, unknown>)[field];
    if (value !== null && value !== undefined) body[field] = value;
  }
  await ctx.client.remove('devices', current.id);
  try {
    const { resource } = await ctx.client.create('devices', body);
    verifyAnswer(change, body, resource, null);
    return undefined;
  } catch (createError) {
    const original: Record<string, unknown> = {
      user_id: current.user_id,
      name: current.name,
      ...liveDeviceBody(current),
    };
    if (current.preshared_key) original.preshared_key = current.preshared_key;
    try {
      await ctx.client.create('devices', original);
    } catch {
      throw new ChangeFailure(
        `deleted, but creating it again failed (${failureMessage(createError)}), and so did restoring the original: run apply again`,
      );
    }
    throw new ChangeFailure(
      `creating the replacement failed (${failureMessage(createError)}); the original device was put back`,
    );
  }
}

function resolveRefs(body: Record<string, unknown>, ctx: ExecutionContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === 'object' && value !== null && '$ref' in value) {
      const ref = String((value as { $ref: unknown }).$ref);
      const id = ctx.createdIds.get(ref);
      if (!id) throw new ChangeFailure(`${ref} was not created in this apply`);
      out[key] = id;
    } else {
      out[key] = value;
    }
  }
  return out;
}

function withSecrets(change: Change, body: Record<string, unknown>, ctx: ExecutionContext): Record<string, unknown> {
  for (const { field, ref } of change.secrets ?? []) {
    const value = ctx.resolveSecret(ref);
    body[field] = value;
    if (field === 'password') body.password_confirmation = value;
  }
  return body;
}

/**
 * The server's answer must hold what was asked. A device update answered with the old values of
 * fields other than name and description is the upstream 0.7.26+ behaviour of ignoring them.
 */
function verifyAnswer(
  change: Change,
  asked: Record<string, unknown>,
  answer: LiveObject,
  before: LiveObject | null,
): void {
  const differing: string[] = [];
  for (const [field, value] of Object.entries(asked)) {
    if (field === 'password' || field === 'password_confirmation') continue;
    if (!answerHolds(change.kind, field, value, answer)) differing.push(field);
  }
  if (differing.length === 0) return;
  const shown = differing.join(', ');
  if (change.kind === 'device' && change.action === 'update' && before) {
    const ignored = differing.filter(
      (f) => !isLegacyUpdatable(f) && sameAsBefore(f, before as ApiDevice, answer as ApiDevice),
    );
    if (ignored.length === differing.length) {
      throw new ChangeFailure(
        `the server ignored ${ignored.join(', ')} on update and kept the old values (the behaviour of Firezone 0.7.26 and later); ` +
          "add `device_updates: replace` to the files' settings (or run plan/apply with --replace) to delete and re-create such devices with the same keys and addresses",
      );
    }
  }
  throw new ChangeFailure(`the server's answer does not hold what was asked for ${shown}`);
}

function sameAsBefore(field: string, before: ApiDevice, answer: ApiDevice): boolean {
  if (field === 'preshared_key') return before.preshared_key === answer.preshared_key;
  return isWritableDeviceField(field) && sameDeviceValue(field, before[field], answer[field]);
}

function answerHolds(kind: ResourceKind, field: string, asked: unknown, answer: LiveObject): boolean {
  const got = (answer as unknown as Record<string, unknown>)[field];
  if (kind === 'user') {
    if (field === 'email') return typeof got === 'string' && userKey(got) === userKey(String(asked));
    return field !== 'role' || got === asked;
  }
  if (kind === 'device') {
    if (field === 'user_id' || field === 'name') return String(got ?? '').trim() === String(asked ?? '').trim();
    if (field === 'preshared_key') return got === asked;
    if (isWritableDeviceField(field)) {
      // With its default on, the server shows the default's value, not what was stored.
      if (isDefaultableField(field) && (answer as ApiDevice)[useDefaultFlag(field)] === true) return true;
      return sameDeviceValue(field, asked, got);
    }
    return true;
  }
  if (field === 'destination')
    return typeof got === 'string' && normalizeDestination(got) === normalizeDestination(String(asked));
  if (field === 'port_range')
    return normalizePortRange(got as string | null) === normalizePortRange(asked as string | null);
  if (field === 'port_type' || field === 'action' || field === 'user_id') return (got ?? null) === (asked ?? null);
  return true;
}
