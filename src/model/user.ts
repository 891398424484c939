/** Field rules of users (spec/api-v0.md section 4). */
import { addError, hasErrors, type Checked, type FieldErrors } from './errors.js';
import { charLength, has, isBlank, type Mode, type RawInput } from './fields.js';
import { Messages } from './messages.js';
import { ROLES, type Role } from './types.js';

export const EMAIL_MAX_LENGTH = 255;
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 64;

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;

export interface UserInput {
  email?: string;
  role?: Role;
  /** Write-only. Never logged, never returned. */
  password?: string;
}

/** The email check alone, for callers that hold an email outside a request body. */
export function checkEmail(value: unknown): { ok: true; email: string } | { ok: false; message: string } {
  if (isBlank(value)) return { ok: false, message: Messages.blank };
  if (typeof value !== 'string') return { ok: false, message: Messages.invalid };
  const email = value.trim();
  if (email.length > EMAIL_MAX_LENGTH || !EMAIL_SHAPE.test(email)) return { ok: false, message: Messages.invalid };
  return { ok: true, email };
}

export function checkPassword(password: unknown, confirmation: unknown, errors: FieldErrors): string | undefined {
  if (typeof password !== 'string') {
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
