/**
 * Secrets (passwords, preshared keys) travel inside a Secret so that they cannot leak by
 * accident: JSON.stringify, String(), template literals and util.inspect all show the reference,
 * never the value. Only `reveal()` gives the value, at the moment it goes into a request body.
 */
import { inspect } from 'node:util';

/** Where a secret comes from. `file` is resolved relative to `baseDir` (the declaring file's folder). */
export type SecretRef = { env: string } | { file: string; baseDir?: string } | { tfvar: string };

/** What a Secret shows in place of its value (String(), template literals). */
export const SENSITIVE = '(sensitive)';

export function describeSecretRef(ref: SecretRef): string {
  if ('env' in ref) return `env:${ref.env}`;
  if ('tfvar' in ref) return `var.${ref.tfvar}`;
  return `file:${ref.file}`;
}

/**
 * What reading a secret gave: its value, or why there is none. `unreadable`: the variable is unset
 * or empty, the file is missing or empty, or (read late) the file now breaks a containment rule.
 * `invalid`: it was read, and the server would refuse it (a password too short, a key of the
 * wrong shape); the message names the problem, never the value.
 */
export type SecretRead = { value: string } | { unreadable: string } | { invalid: string };

/** Why a secret cannot be used, for messages: `environment variable X is not set`, `is too short (…)`. */
export function secretProblem(read: SecretRead): string | undefined {
  return 'unreadable' in read ? read.unreadable : 'invalid' in read ? read.invalid : undefined;
}

/** reveal() of a secret that has no usable value; the message names the reference's problem, never a value. */
export class SecretUnavailableError extends Error {
  override readonly name = 'SecretUnavailableError';
}

/**
 * A secret of the desired state. Declared secrets are read lazily, where they are used: a password only when it
 * is sent (a create, `--rotate-passwords`), a preshared key where it is sent or compared (plan,
 * apply, drift), so that `validate`, `test`, `explain`, and `drift` without a preshared key to
 * compare, run with no secret at hand. The first read is kept: one process sends and seals the
 * value it compared.
 */
export class Secret {
  #read: SecretRead | undefined;
  readonly #reader: (() => SecretRead) | undefined;
  readonly ref: SecretRef;
  /** Where the reference is declared (`teams/platform.yaml:39:15`), when a front end knows it: every message about it names it. */
  readonly at: string | undefined;

  /** `value`: the value itself, or how to read it (called once, on first use). */
  constructor(value: string | (() => SecretRead), ref: SecretRef, at?: string) {
    if (typeof value === 'string') this.#read = { value };
    else this.#reader = value;
    this.ref = ref;
    this.at = at;
  }

  /** Reads the value (once), or says why there is none. */
  read(): SecretRead {
    this.#read ??= this.#reader!();
    return this.#read;
  }

  /** Whether it has been read already (without reading it). */
  get wasRead(): boolean {
    return this.#read !== undefined;
  }

  /** The value; throws SecretUnavailableError when there is none (see read()). */
  reveal(): string {
    const read = this.read();
    if ('value' in read) return read.value;
    throw new SecretUnavailableError(secretProblem(read)!);
  }

  equals(other: string | null | undefined): boolean {
    return other === this.reveal();
  }

  toJSON(): SecretRef {
    return this.ref;
  }

  toString(): string {
    return SENSITIVE;
  }

  [inspect.custom](): string {
    return `Secret(${describeSecretRef(this.ref)})`;
  }
}

/**
 * The secret fields a change sends, each by reference (a plan's `secrets`, a saved plan's HMACs):
 * the one list, which schemas/plan.schema.json repeats for people and editors.
 */
export const SENT_SECRET_FIELDS = ['password', 'preshared_key'] as const;
export type SentSecretField = (typeof SENT_SECRET_FIELDS)[number];

/** Whether a field is one a change sends as a secret (SENT_SECRET_FIELDS). */
export function isSentSecretField(field: unknown): field is SentSecretField {
  return (SENT_SECRET_FIELDS as readonly unknown[]).includes(field);
}

/**
 * Fields whose values are secrets even if a plan forgot to mark them: shown (and reported) as
 * changed, never as values. The fields sent as secrets, the confirmation sent with a password, and
 * a token.
 */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([...SENT_SECRET_FIELDS, 'password_confirmation', 'token']);

/** Whether a field change must never show its values. */
export function isSecretField(change: { field: string; sensitive?: boolean }): boolean {
  return !!change.sensitive || SECRET_FIELDS.has(change.field);
}
