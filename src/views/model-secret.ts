/**
 * What a secret field shows in place of its values (src/model/secret.ts keeps the values out of
 * every output): in the plan's text, and in drift reports, whose JSON holds the same words.
 */
export const SENSITIVE_CHANGED = '(sensitive value changed)';
/** A secret sent again that the server cannot show (`--rotate-passwords`): whether it differs is unknown. */
export const SENSITIVE_RESENT = '(sensitive value sent again; the server cannot show whether it differs)';
