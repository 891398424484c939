/**
 * Secrets (passwords, preshared keys) travel inside a Secret so that they cannot leak by
 * accident: JSON.stringify, String(), template literals and util.inspect all show the reference,
 * never the value. Only `reveal()` gives the value, at the moment it goes into a request body.
 */
import { inspect } from 'node:util';

/** Where a secret comes from. `file` is resolved relative to `baseDir` (the declaring file's folder). */
export type SecretRef = { env: string } | { file: string; baseDir?: string } | { tfvar: string };

export const SENSITIVE_CHANGED = '(sensitive value changed)';
export const SENSITIVE = '(sensitive)';

export function describeSecretRef(ref: SecretRef): string {
  if ('env' in ref) return `env:${ref.env}`;
  if ('tfvar' in ref) return `var.${ref.tfvar}`;
  return `file:${ref.file}`;
}

export class Secret {
  readonly #value: string;
  readonly ref: SecretRef;

  constructor(value: string, ref: SecretRef) {
    this.#value = value;
    this.ref = ref;
  }

  reveal(): string {
    return this.#value;
  }

  equals(other: string | null | undefined): boolean {
    return other === this.#value;
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

/** Fields whose values are secrets even if a plan forgot to mark them: shown (and reported) as changed, never as values. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'password_confirmation',
  'preshared_key',
  'token',
]);

/** Whether a field change must never show its values. */
export function isSecretField(change: { field: string; sensitive?: boolean }): boolean {
  return !!change.sensitive || SECRET_FIELDS.has(change.field);
}
