/** The 422 error map of the /v0 contract: field name -> messages. Errors of no field go under `base`. */
export type FieldErrors = Record<string, string[]>;

export function addError(errors: FieldErrors, field: string, message: string): void {
  const list = (errors[field] ??= []);
  if (!list.includes(message)) list.push(message);
}

export function mergeErrors(into: FieldErrors, from: FieldErrors): void {
  for (const [field, messages] of Object.entries(from)) {
    for (const message of messages) addError(into, field, message);
  }
}

export function hasErrors(errors: FieldErrors): boolean {
  return Object.keys(errors).length > 0;
}

/**
 * The result of checking one input: the normalised values of the keys it carried, or errors.
 * A failed check still carries `partial`, the values of the keys that passed, so that a caller
 * can run its own checks on them and report every error of a request together.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors; partial?: T };
