/**
 * What a secret field shows in place of its values (src/model/secret.ts keeps the values out of
 * every output): in the plan's text, and in drift reports, whose JSON holds the same words.
 */
export const SENSITIVE_CHANGED = '(sensitive value changed)';
/** A secret sent again that the server cannot show (`--rotate-passwords`): whether it differs is unknown. */
export const SENSITIVE_RESENT = '(sensitive value sent again; the server cannot show whether it differs)';

const NOT_CHECKED_WORDS: Record<string, string> = { preshared_key: 'preshared key' };

/**
 * A field a plan did not compare because its secret cannot be read here (src/plan/types.ts
 * NotCheckedField), as plans and drift reports word it: `not checked: preshared key of
 * alice@example.com/laptop (environment variable ALICE_LAPTOP_PSK is not set)`.
 */
export function notCheckedLine(item: { id: string; field: string; reason: string }): string {
  const object = item.id.replace(/^[a-z]+:/, '');
  return `not checked: ${NOT_CHECKED_WORDS[item.field] ?? item.field} of ${object} (${item.reason})`;
}
