/**
 * Where a problem of the desired state is reported and how it is worded: at the value at fault
 * when the front end recorded where it stands (SourceLocation.fields), else at its object, with
 * the path people use to name it; the model's terse field messages with what to write instead.
 */
import { isDefaultableField, useDefaultFlag } from '../../model/device-fields.js';
import type { FieldErrors } from '../../model/errors.js';
import { isText } from '../../model/fields.js';
import { Messages } from '../../model/messages.js';
import type { SourceLocation } from '../../model/state.js';
import { emailCharacterProblem } from '../../model/user.js';
import { emailCharacterProblemText } from '../../views/model-email.js';
import type { Diagnostic } from '../types.js';

/** `users[0]` + `mtu` -> `users[0].mtu`; `settings` + `manage.rules[1]` -> `settings.manage.rules[1]`. */
export function joinPath(base: string, relative: string): string {
  if (base === '') return relative;
  if (relative === '') return base;
  return relative.startsWith('[') ? `${base}${relative}` : `${base}.${relative}`;
}

/** Something the state declares, with where it stands and the path to name it by when the front end gave none. */
export interface Declared {
  source?: SourceLocation;
  fallbackPath: string;
}

function pathOf(item: Declared): string {
  return item.source?.path ?? item.fallbackPath;
}

/** `file:line:column`, or the path when the front end recorded no file. */
export function whereIs(item: Declared, field?: string): string {
  const at = (field ? item.source?.fields?.[field] : undefined) ?? item.source;
  return at ? `${at.file}:${at.line}:${at.column}` : field ? joinPath(pathOf(item), field) : pathOf(item);
}

/**
 * A diagnostic about `field` of `item` (or the item itself), placed at the field's value, else at
 * the first of `alternates` that was written (a missing endpoint is best shown at the default
 * flag set false that requires it), else at the item.
 */
export function report(
  item: Declared,
  field: string | undefined,
  message: string,
  alternates: string[] = [],
): Diagnostic {
  const fields = item.source?.fields;
  const at =
    field === undefined
      ? item.source
      : (fields?.[field] ?? alternates.map((a) => fields?.[a]).find((l) => l !== undefined) ?? item.source);
  return {
    message,
    ...(at ? { file: at.file, line: at.line, column: at.column } : {}),
    path: field === undefined ? pathOf(item) : joinPath(pathOf(item), field),
  };
}

/** What a field looks like, added to the model's terse `is invalid` / `bad format` so that people know what to write. */
const EXPECTED_SHAPES: Record<string, string> = {
  email: 'expected local@domain with no white space, control or invisible characters, at most 255 characters',
  allowed_ips: 'expected an IP address or CIDR block such as 10.0.0.0/8',
  dns: 'expected an IP address or a host name, without a port',
  endpoint: 'expected host, host:port, IPv4:port, IPv6 or [IPv6]:port, with a port from 1 to 65535',
  ipv4: 'expected an IPv4 address such as 10.3.2.20',
  ipv6: 'expected an IPv6 address such as fd00::3:2:20',
  destination: 'expected an IP address or CIDR block such as 10.1.0.0/16',
  port_range: 'expected "443", "80-443" or "80 - 443"',
};

/** The note for a value refused for holding text no server can store (a NUL, a lone surrogate). */
const MALFORMED_NOTE = 'it holds a NUL or a lone UTF-16 surrogate';

function holdsMalformedText(value: unknown): boolean {
  if (typeof value === 'string') return !isText(value);
  return Array.isArray(value) && value.some((entry) => typeof entry === 'string' && !isText(entry));
}

/** `value`, when given, is what the message is about: text no server can store is named as such. */
export function explain(field: string, message: string, value?: unknown): string {
  if (message === Messages.invalid && holdsMalformedText(value)) return `${message}: ${MALFORMED_NOTE}`;
  const shape = EXPECTED_SHAPES[field.replace(/\[\d+\]$/, '')];
  return shape && (message === Messages.invalid || message === Messages.badFormat) ? `${message} (${shape})` : message;
}

/** explain for an email, saying which character is refused when it is a character (the model says only `is invalid`). */
export function explainEmail(value: unknown, message: string): string {
  const problem = message === Messages.invalid && typeof value === 'string' ? emailCharacterProblem(value) : null;
  return problem === null ? explain('email', message) : `${message}: ${emailCharacterProblemText(problem)}`;
}

export function reportFieldErrors(
  item: Declared,
  errors: FieldErrors,
  into: Diagnostic[],
  ignore: string[] = [],
  values: Record<string, unknown> = {},
): void {
  for (const [field, messages] of Object.entries(errors)) {
    if (ignore.includes(field)) continue;
    for (const message of messages) {
      into.push(
        field === 'base'
          ? report(item, undefined, message)
          : report(
              item,
              field,
              explain(field, message, values[field]),
              isDefaultableField(field) ? [useDefaultFlag(field)] : [],
            ),
      );
    }
  }
}

/** The first declaration of each key. */
export function firstByKey<T>(items: T[], keyOf: (item: T) => string | null): Map<string, T> {
  const first = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== null && !first.has(key)) first.set(key, item);
  }
  return first;
}

/** Reports each later declaration whose key an earlier one already holds. */
export function reportDuplicates<T extends Declared>(
  items: T[],
  keyOf: (item: T) => string | null,
  describe: (item: T, first: T) => Diagnostic,
  into: Diagnostic[],
): void {
  const first = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === null) continue;
    const earlier = first.get(key);
    if (earlier) into.push(describe(item, earlier));
    else first.set(key, item);
  }
}

export function describeList(list: string[]): string {
  return list.length === 0 ? 'an empty list' : list.join(', ');
}
