/** Field rules of users (docs/api-v0.md section 4). */
import { addError, hasErrors, type Checked, type FieldErrors } from './errors.js';
import { charLength, has, isBlank, isText, type Mode, type RawInput } from './fields.js';
import { Messages } from './messages.js';
import { firstLookAlike } from './email-characters.js';
import { ROLES, type Role } from './types.js';

export const EMAIL_MAX_LENGTH = 255;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 64;

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;
/**
 * Characters no email may hold: control characters (C0, DEL, C1) and the invisible format
 * characters (bidi controls such as U+202E, zero-width characters such as U+200B, U+FEFF, the
 * soft hyphen), with which one address can be made to look like another.
 */
const EMAIL_HIDDEN = /[\p{Cc}\p{Cf}]/u;
const ASCII_ONLY = /^[\x20-\x7e]*$/;
const ASCII_LETTER = /[a-z]/;

/**
 * The first character of an email that is not ASCII but whose lower case holds an ASCII letter
 * (the Kelvin sign U+212A lower-cases to `k`, U+0130 to `i` and a combining dot): emails compare
 * by their Unicode lower case (userKey, as a citext column does), so such a character would let
 * one address squat another (`\u212Aaren@…` is `karen@…`). Undefined when there is none.
 */
export function asciiFoldingCharacter(email: string): string | undefined {
  if (ASCII_ONLY.test(email)) return undefined;
  for (const ch of email) if (ch > '\x7f' && ASCII_LETTER.test(ch.toLowerCase())) return ch;
  return undefined;
}

/**
 * Why an email is refused for a character it holds, as a code and the character
 * (src/views/model-email.ts words it, naming the character by its code point).
 */
export type EmailCharacterProblem =
  /** A NUL or a lone UTF-16 surrogate. */
  | { code: 'nul_or_surrogate' }
  /** A control character or an invisible format character. */
  | { code: 'hidden'; char: string }
  /** A character whose lower case holds an ASCII letter (U+212A, the Kelvin sign, is `k`). */
  | { code: 'ascii_folding'; char: string }
  /** A precomposed look-alike that Unicode writes as other characters (NFC). */
  | { code: 'composed'; char: string }
  /** A compatibility form of plainer characters (NFKC). */
  | { code: 'compatibility'; char: string }
  /** An invisible character of the generated table. */
  | { code: 'invisible'; char: string }
  /** A letter written as a letter and a combining mark (not in NFC). */
  | { code: 'not_nfc' };

/**
 * Why an email is refused for a character it holds (`validate` says it); null when none of its
 * characters is refused. Lone surrogates and NUL come first, then hidden characters, then
 * characters that lower-case to ASCII letters, then the look-alikes of the generated table
 * (email-characters.ts), then letters written as a letter and a combining mark (not in NFC).
 */
export function emailCharacterProblem(email: string): EmailCharacterProblem | null {
  if (!isText(email)) return { code: 'nul_or_surrogate' };
  const hidden = EMAIL_HIDDEN.exec(email);
  if (hidden) return { code: 'hidden', char: hidden[0] };
  const folding = asciiFoldingCharacter(email);
  if (folding !== undefined) return { code: 'ascii_folding', char: folding };
  const lookAlike = firstLookAlike(email);
  if (lookAlike?.kind === 'composed') return { code: 'composed', char: lookAlike.char };
  if (lookAlike?.kind === 'compatibility') return { code: 'compatibility', char: lookAlike.char };
  if (lookAlike) return { code: 'invisible', char: lookAlike.char };
  if (email.normalize('NFC') !== email) return { code: 'not_nfc' };
  return null;
}

export interface UserInput {
  email?: string;
  role?: Role;
  /** Write-only. Never logged, never returned. */
  password?: string;
}

/** The email check alone, for callers that hold an email outside a request body. */
export function checkEmail(value: unknown): { ok: true; email: string } | { ok: false; message: string } {
  if (isBlank(value)) return { ok: false, message: Messages.blank };
  if (!isText(value)) return { ok: false, message: Messages.invalid };
  const email = value.trim();
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(email)) return { ok: false, message: Messages.invalid };
  if (!ASCII_ONLY.test(email) && emailCharacterProblem(email) !== null) return { ok: false, message: Messages.invalid };
  return { ok: true, email };
}

export function checkPassword(password: unknown, confirmation: unknown, errors: FieldErrors): string | undefined {
  if (!isText(password)) {
    addError(errors, 'password', Messages.invalid);
    return undefined;
  }
  const length = charLength(password);
  if (length < PASSWORD_MIN_LENGTH) addError(errors, 'password', Messages.tooShort(PASSWORD_MIN_LENGTH));
  if (length > PASSWORD_MAX_LENGTH) addError(errors, 'password', Messages.tooLong(PASSWORD_MAX_LENGTH));
  if (isBlank(confirmation)) addError(errors, 'password_confirmation', Messages.blank);
  else if (confirmation !== password) addError(errors, 'password_confirmation', Messages.confirmation);
  return password;
}

/**
 * Checks a `user` body. On create `email` is required and `role` defaults to `unprivileged`
 * (also when sent empty or null).
 * A null or empty password is ignored (a password cannot be cleared). Read-only and unknown keys
 * are ignored.
 */
export function checkUserInput(input: RawInput, mode: Mode): Checked<UserInput> {
  const errors: FieldErrors = {};
  const value: UserInput = {};

  if (mode === 'create' || has(input, 'email')) {
    const email = checkEmail(input.email);
    if (email.ok) value.email = email.email;
    else addError(errors, 'email', email.message);
  }

  if (has(input, 'role')) {
    const role = input.role;
    // Create: an empty or null role is the default, as upstream (whose create ignores any role
    // but `admin`; clients such as firezone-client-go always send `"role": ""`). Update: required.
    if (isBlank(role) && mode === 'create') value.role = 'unprivileged';
    else if (isBlank(role)) addError(errors, 'role', Messages.blank);
    else if (typeof role === 'string' && (ROLES as readonly string[]).includes(role)) value.role = role as Role;
    else addError(errors, 'role', Messages.invalid);
  } else if (mode === 'create') {
    value.role = 'unprivileged';
  }

  if (has(input, 'password') && !isBlank(input.password)) {
    const password = checkPassword(input.password, input.password_confirmation, errors);
    if (password !== undefined) value.password = password;
  }

  return hasErrors(errors) ? { ok: false, errors, partial: value } : { ok: true, value };
}
