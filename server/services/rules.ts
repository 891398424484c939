/**
 * Rules (docs/api-v0.md section 6): field rules from the model; the owner must exist; port_type and
 * port_range go together on the whole (merged) rule; no two rules may overlap. The overlap check
 * runs inside the write transaction, so two concurrent requests cannot both pass it.
 */
import { randomUUID } from 'node:crypto';
import {
  Messages,
  addError,
  checkRuleInput,
  checkRulePorts,
  hasErrors,
  isUuid,
  mergeErrors,
  parseRule,
  rulesOverlap,
  type ApiRule,
  type FieldErrors,
  type RawInput,
  type RuleInput,
} from '../../src/model/index.js';
import { nowTimestamp, timestampAfter } from '../clock.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { RulePatch, RuleRow, StoreReader } from '../store/index.js';
import { writeTransaction, type ServiceContext } from './context.js';
import { ruleView, shownRule } from './views.js';

type RuleFields = Pick<RuleRow, 'action' | 'destination' | 'port_type' | 'port_range' | 'user_id'>;

/** Candidates the index returns per check; each is confirmed with the model's rulesOverlap. */
const CANDIDATES = 32;

/** The first existing rule that overlaps `rule` (other than the rule `excludeId` itself), or null. */
export async function findOverlappingRule(
  store: StoreReader,
  rule: RuleFields,
  excludeId?: string,
): Promise<RuleRow | null> {
  const parsed = parseRule({ ...rule, owner: rule.user_id });
  if (!parsed) return null;
  const candidates = await store.findIntersectingRules({
    action: rule.action,
    userId: rule.user_id,
    family: parsed.destination.family,
    start: parsed.destination.start,
    end: parsed.destination.end,
    prefix: parsed.destination.prefix,
    portType: rule.port_type,
    ports: parsed.ports,
    excludeId,
    limit: CANDIDATES,
  });
  for (const candidate of candidates) {
    const other = parseRule({ ...candidate, owner: candidate.user_id });
    if (other && rulesOverlap(parsed, other)) return candidate;
  }
  return null;
}

function checkedInput(
  body: RawInput,
  mode: 'create' | 'update',
  stored?: RuleRow,
): { input: RuleInput; errors: FieldErrors } {
  const checked = checkRuleInput(body, mode, stored);
  return checked.ok
    ? { input: checked.value, errors: {} }
    : { input: checked.partial ?? {}, errors: { ...checked.errors } };
}

/** Checks of the whole rule that need the merged values and the database. */
async function checkWholeRule(
  store: StoreReader,
  rule: RuleFields,
  errors: FieldErrors,
  userChanged: boolean,
  excludeId?: string,
): Promise<void> {
  if (!errors.port_type && !errors.port_range) mergeErrors(errors, checkRulePorts(rule));
  if (userChanged && rule.user_id !== null) {
    const owner = isUuid(rule.user_id) ? await store.getUser(rule.user_id.toLowerCase()) : null;
    if (!owner) addError(errors, 'user_id', Messages.doesNotExist);
  }
  if (hasErrors(errors)) return;
  if (await findOverlappingRule(store, rule, excludeId)) addError(errors, 'destination', Messages.overlaps);
}

export async function listRules(ctx: ServiceContext): Promise<ApiRule[]> {
  return (await ctx.store.listRules()).map(ruleView);
}

export async function showRule(ctx: ServiceContext, id: string): Promise<ApiRule> {
  const rule = isUuid(id) ? await ctx.store.getRule(id.toLowerCase()) : null;
  if (!rule) throw new NotFoundError();
  return shownRule(rule);
}

export async function createRule(ctx: ServiceContext, body: RawInput): Promise<ApiRule> {
  const { input, errors } = checkedInput(body, 'create');
  return writeTransaction(ctx, async (tx) => {
    const fields: RuleFields = {
      action: input.action ?? 'drop',
      destination: input.destination ?? '',
      port_type: input.port_type ?? null,
      port_range: input.port_range ?? null,
      user_id: input.user_id === undefined || input.user_id === null ? null : input.user_id.toLowerCase(),
    };
    await checkWholeRule(tx, fields, errors, true);
    if (hasErrors(errors)) throw new ValidationError(errors);
    const now = nowTimestamp(ctx.clock);
    const row: RuleRow = { id: randomUUID(), ...fields, inserted_at: now, updated_at: now };
    await tx.insertRule(row);
    return ruleView(row);
  });
}

export async function updateRule(ctx: ServiceContext, id: string, body: RawInput): Promise<ApiRule> {
  return writeTransaction(ctx, async (tx) => {
    const rule = isUuid(id) ? await tx.getRule(id.toLowerCase()) : null;
    if (!rule) throw new NotFoundError();
    // Checked against the stored rule: one stored with a range reaching 65535 may send it back.
    const { input, errors } = checkedInput(body, 'update', rule);
    const patch: RulePatch = {};
    if (input.action !== undefined && input.action !== rule.action) patch.action = input.action;
    if (input.destination !== undefined && input.destination !== rule.destination)
      patch.destination = input.destination;
    if (input.port_type !== undefined && input.port_type !== rule.port_type) patch.port_type = input.port_type;
    if (input.port_range !== undefined && input.port_range !== rule.port_range) patch.port_range = input.port_range;
    if (input.user_id !== undefined) {
      const userId = input.user_id === null ? null : input.user_id.toLowerCase();
      if (userId !== rule.user_id) patch.user_id = userId;
    }
    const merged: RuleFields = { ...rule, ...patch };
    await checkWholeRule(tx, merged, errors, patch.user_id !== undefined, rule.id);
    if (hasErrors(errors)) throw new ValidationError(errors);
    if (Object.keys(patch).length === 0) return ruleView(rule);
    patch.updated_at = timestampAfter(ctx.clock, rule.updated_at);
    await tx.updateRule(rule.id, patch);
    return ruleView({ ...rule, ...patch });
  });
}

export async function deleteRule(ctx: ServiceContext, id: string): Promise<void> {
  await writeTransaction(ctx, async (tx) => {
    const rule = isUuid(id) ? await tx.getRule(id.toLowerCase()) : null;
    if (!rule) throw new NotFoundError();
    await tx.deleteRule(rule.id);
  });
}
