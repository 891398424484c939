/**
 * The top-level `acknowledged:` entries (a difference accepted for a while: `key`, `field` or `*`,
 * `value` or `fingerprint`, `reason`, `until`) as adopt reads them: once a difference is adopted,
 * the files declare the live value and its acknowledgement has nothing left to acknowledge, so it
 * is removed in the same edit.
 */
import { normalizeTarget, TargetError } from '../../plan/target.js';
import { isMap, isSeq, type Located, type YAMLMap } from './text-edit.js';

export interface Acknowledgement {
  value: Record<string, unknown>;
  located: Located;
}

/** The entries of a document's `acknowledged:` list, each with where it stands. */
export function acknowledgementsOf(root: YAMLMap): Acknowledgement[] {
  const list = root.get('acknowledged', true) as unknown;
  if (!isSeq(list)) return [];
  const entries: Acknowledgement[] = [];
  list.items.forEach((item, index) => {
    if (!isMap(item)) return;
    const value = item.toJSON() as Record<string, unknown>;
    entries.push({ value, located: { node: item, seq: list, index, map: root, key: 'acknowledged' } });
  });
  return entries;
}

/** An entry's key as a change id (`device:alice@example.com/laptop`), or null when it names none. */
function entryId(key: unknown): string | null {
  if (typeof key !== 'string') return null;
  try {
    return normalizeTarget(key);
  } catch (error) {
    if (error instanceof TargetError) return null;
    throw error;
  }
}

/**
 * Whether an entry acknowledges a difference of `id` that adopt wrote: the same object, and its
 * field among `fields` (`*`: the whole object, either side).
 */
export function matchesAcknowledgement(entry: Record<string, unknown>, id: string, fields: readonly string[]): boolean {
  if (entryId(entry.key) !== id) return false;
  const field = entry.field;
  if (field === undefined || field === '*' || fields.includes('*')) return true;
  return typeof field === 'string' && fields.includes(field);
}
