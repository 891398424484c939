/**
 * Live rules no file declares that still decide packets inside the managed blocks once apply is
 * done (the state after apply, after-apply.ts): a global rule broader than `manage.rules` that
 * overlaps a managed block, any rule left in place that changes the verdict of a packet for a user
 * inside `manage.users` within the managed blocks, and, listed once each, users outside
 * `manage.users` whose own rules reach into a managed block (whether or not they change a verdict
 * there today). Pure; exact (access changes by
 * interval arithmetic, each rule clipped to the managed blocks).
 */
import { ruleKeyOfOwnerKey } from '../model/keys.js';
import { cidrRange } from '../model/net.js';
import { describeRule } from '../views/model-rule.js';
import { computeAccessChanges, type AccessBlock, type AccessChanges } from './changes.js';
import {
  NO_LEFT_OBJECT_POLICY,
  type AfterApplyRule,
  type LeftInPlace,
  type LeftObjectPolicy,
  type StateAfterApply,
} from './after-apply.js';

/**
 * One live object that decides packets inside the managed blocks although no file declares it.
 * `status`: `counts` (access drift: plan and drift exit 2, whatever `drift.undeclared` says),
 * `listed` (a user outside `manage.users`: shown, exit code unchanged), `forgotten` (evaluated,
 * shown as forgotten, never drift).
 */
export interface DecidingItem {
  kind: 'rule' | 'user';
  /** `rule:<natural key>` or `user:<email>`, as plan outcome ids. */
  id: string;
  /** The live rule's id (kind rule). */
  liveId?: string;
  /** `rule accept 10.0.0.0/7 (global)`, `user carol@other.example`. */
  label: string;
  left: LeftInPlace;
  /** The managed blocks it meets. */
  inside: string[];
  /** What it changes there, for the repository's users (or, for a user, for them). */
  access: AccessChanges;
  status: 'counts' | 'listed' | 'forgotten';
}

const EVERYWHERE = ['0.0.0.0/0', '::/0'];

/** The managed blocks (`manage.rules`; every address when it is not given). */
function blocksOf(state: StateAfterApply): string[] {
  return state.managedBlocks ?? EVERYWHERE;
}

/** The rule restricted to the managed blocks: one copy per block it contains, itself inside one, or none. */
function clip(rule: AfterApplyRule, blocks: readonly string[]): { rules: AfterApplyRule[]; inside: string[] } {
  const range = cidrRange(rule.destination);
  const rules: AfterApplyRule[] = [];
  const inside: string[] = [];
  if (!range) return { rules, inside };
  for (const block of blocks) {
    const b = cidrRange(block);
    if (!b || b.family !== range.family) continue;
    if (range.start <= b.start && b.end <= range.end) {
      rules.push(b.start === range.start && b.end === range.end ? rule : { ...rule, destination: block });
      inside.push(block);
    } else if (b.start <= range.start && range.end <= b.end) {
      rules.push(rule);
      inside.push(block);
    }
  }
  return { rules, inside };
}

function isEmpty(changes: AccessChanges): boolean {
  return (
    changes.users.every((u) => u.reachable.length === 0 && u.blocked.length === 0) &&
    (changes.everyone === undefined ||
      (changes.everyone.reachable.length === 0 && changes.everyone.blocked.length === 0))
  );
}

/** Every live rule left in place that decides packets inside the managed blocks, and every outside user reaching in. */
export function decidingLeftRules(
  state: StateAfterApply,
  policy: LeftObjectPolicy = NO_LEFT_OBJECT_POLICY,
): DecidingItem[] {
  const blocks = blocksOf(state);
  const { rules, settings } = state.model;
  const portRules = settings.portRules;
  const repositoryUsers = [...state.model.users.keys()].filter((key) => state.managesUser(key));
  const items: DecidingItem[] = [];
  const outsiders = new Map<string, AfterApplyRule[]>();
  for (const rule of state.leftRules()) {
    if (policy.acknowledged(rule)) continue;
    if (rule.left!.kind === 'outside-users') {
      if (rule.owner === null) continue;
      let list = outsiders.get(rule.owner);
      if (!list) outsiders.set(rule.owner, (list = []));
      list.push(rule);
      continue;
    }
    const { rules: clipped, inside } = clip(rule, blocks);
    if (clipped.length === 0) continue;
    const users = rule.owner === null ? repositoryUsers : state.managesUser(rule.owner) ? [rule.owner] : [];
    if (users.length === 0 && rule.owner !== null) continue;
    const others = rules.filter((r) => r !== rule);
    const access = computeAccessChanges({ before: others, after: [...others, ...clipped], users, portRules });
    // A global rule broader than manage.rules that meets a managed block is shown even when it changes nothing there today.
    const broad = rule.owner === null && rule.left!.kind === 'outside-rules';
    if (!broad && isEmpty(access)) continue;
    items.push({
      kind: 'rule',
      id: `rule:${ruleKeyOfOwnerKey(rule.owner, rule)}`,
      ...(rule.id ? { liveId: rule.id } : {}),
      label: `rule ${describeRule(rule)}`,
      left: rule.left!,
      inside,
      access,
      status: policy.forgotten(rule) ? 'forgotten' : 'counts',
    });
  }
  for (const [owner, own] of outsiders) {
    const clipped = own.flatMap((rule) => clip(rule, blocks).rules);
    if (clipped.length === 0) continue;
    const inside = [...new Set(own.flatMap((rule) => clip(rule, blocks).inside))];
    const others = rules.filter((r) => r.owner !== owner);
    // Listed whenever their rules reach into a managed block, even where they change no verdict today.
    const access = computeAccessChanges({ before: others, after: [...others, ...clipped], users: [owner], portRules });
    const email = state.model.users.get(owner)?.email ?? owner;
    items.push({
      kind: 'user',
      id: `user:${owner}`,
      label: `user ${email}`,
      left: { kind: 'outside-users' },
      inside,
      access,
      status: 'listed',
    });
  }
  return items;
}

/** `outside manage.rules`, `on the server but in no file`: why a live rule is not the files' to decide. */
export function leftWhere(left: LeftInPlace): string {
  if (left.kind === 'outside-rules') return 'outside manage.rules';
  if (left.kind === 'outside-users') return 'outside manage.users';
  return 'on the server but in no file';
}

/** Whether the repository can change the object at all (a kept one: by its files or settings). */
export function repositoryCanChange(left: LeftInPlace): boolean {
  return left.kind === 'kept';
}

/** `accept 10.0.0.0/7 (global, outside manage.rules)`: a rule left in place, with its owner and why. */
export function leftRuleText(rule: AfterApplyRule): string {
  const owner = rule.owner === null ? 'global' : rule.owner;
  const text = describeRule(rule).replace(/ \([^)]*\)$/, '');
  return `${text} (${owner}, ${leftWhere(rule.left!)})`;
}

/** `10.0.0.0/8 (all protocols)`, `10.1.0.0/16 tcp 22`: one access block (as views/access.ts words it). */
function blockWords(block: AccessBlock): string {
  const where =
    block.addresses.length > 3
      ? `${block.addresses.slice(0, 3).join(', ')} (+${block.addresses.length - 3} blocks)`
      : block.addresses.join(', ');
  if (block.protocol === 'all') return `${where} (all protocols)`;
  if (block.protocol === 'other') return `${where} other protocols (icmp, …)`;
  return `${where} ${block.protocol} ${block.ports}`;
}

/** `every user reaches 10.0.0.0/8 (all protocols); bob@x is blocked from …`: what an item changes. */
export function effectWords(access: AccessChanges): string {
  const parts: string[] = [];
  const add = (who: string, c: { reachable: AccessBlock[]; blocked: AccessBlock[] }) => {
    for (const b of c.reachable) parts.push(`${who} reaches ${blockWords(b)}`);
    for (const b of c.blocked) parts.push(`${who} is blocked from ${blockWords(b)}`);
  };
  if (access.everyone) {
    const { except } = access.everyone;
    add(
      except.length === 0 ? 'every user' : `every user (except where own rules of ${except.join(', ')} apply)`,
      access.everyone,
    );
  }
  for (const u of access.users) add(u.user, u);
  return parts.length > 0 ? parts.join('; ') : 'no verdict there differs from the other rules today';
}

/**
 * The sentence plan, drift and the webhook show: `rule accept 10.0.0.0/7 (global, outside
 * manage.rules) decides packets inside 10.0.0.0/8: every user reaches 10.0.0.0/8 (all protocols)`.
 */
export function decidingText(item: DecidingItem): string {
  const inside = item.inside.join(', ');
  if (item.kind === 'user')
    return `${item.label} (outside this repository's users) reaches inside ${inside} by its own rules: ${effectWords(item.access)}`;
  const label = item.label.replace(/ \(([^)]*)\)$/, ` ($1, ${leftWhere(item.left)})`);
  const forgotten = item.status === 'forgotten' ? ' (forgotten: not counted as drift)' : '';
  return `${label} decides packets inside ${inside}: ${effectWords(item.access)}${forgotten}`;
}
