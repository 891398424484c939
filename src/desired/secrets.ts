/**
 * Secret references: `{ env: NAME }`, `{ file: PATH }` (relative to the declaring file's folder)
 * and `{ tfvar: NAME }` (a Terraform variable, read from `TF_VAR_<NAME>`). Resolving one gives the
 * value; the errors name the reference, never a value. A secret file is contained (containment.ts):
 * in a git repository it must really lie inside it, symlinks resolved, so that a pull request
 * cannot point a password at any other file of the machine that applies it (an SSH key, a cloud
 * credential) and have apply send its contents; it must be a regular file of at most 64 KiB.
 */
import { relative, resolve } from 'node:path';
import { wireguardKeyMessages } from '../model/device.js';
import { Secret, type SecretRead, type SecretRef } from '../model/secret.js';
import { checkPassword } from '../model/user.js';
import {
  checkContainedFile,
  ContainedFileError,
  containmentOf,
  readContainedFileSync,
  SECRET_FILE_MAX_BYTES,
  type Containment,
} from './containment.js';

export type Environment = Record<string, string | undefined>;

/**
 * A reference that cannot be resolved; the message names the reference and is safe to print.
 * `rule`: the reference breaks a rule (a file outside the repository, not a regular file, too
 * large), which is an error even where a missing secret is only a warning (validate).
 */
export class SecretResolutionError extends Error {
  constructor(
    message: string,
    readonly rule = false,
  ) {
    super(message);
    this.name = 'SecretResolutionError';
  }
}

function readEnvironment(name: string, env: Environment, described: string): string {
  if (name.trim() === '') throw new SecretResolutionError('the environment variable name is empty');
  const value = env[name];
  if (value === undefined) throw new SecretResolutionError(`${described} is not set`);
  if (value === '') throw new SecretResolutionError(`${described} is empty`);
  return value;
}

/** How `resolveSecret` treats a `{ file: PATH }` reference. */
export interface SecretFileOptions {
  /**
   * Where the file must lie. Default: the containment of the reference's `baseDir` (the git work
   * tree of the declaring file, or outside git that file's folder); none when the reference has no
   * `baseDir` (built by a program, not read from a file). A saved plan's references are resolved
   * within the working directory's containment instead (workingContainment), whatever folder the
   * plan names.
   */
  within?: Containment;
}

/** The containment of the working directory: its git work tree, or the directory itself. */
export function workingContainment(): Containment {
  return containmentOf('.', 'the current folder');
}

function containmentOfRef(ref: { baseDir?: string }, options: SecretFileOptions): Containment | null {
  if (options.within) return options.within;
  if (ref.baseDir === undefined) return null; // no declaring file: nothing to be inside
  return containmentOf(ref.baseDir, 'the folder of the file that names it');
}

const TOO_LARGE = (): string => `is larger than ${SECRET_FILE_MAX_BYTES / 1024} KiB, the limit for a secret file`;

/**
 * The value a reference points at. Files lose their trailing line breaks (editors and `echo` add
 * one), nothing else. Throws SecretResolutionError when the variable or file is missing or empty,
 * or when the file breaks a rule (outside its containment, symlinks resolved; not a regular file;
 * larger than SECRET_FILE_MAX_BYTES): then `rule` is true, and the message says which rule.
 */
export function resolveSecret(ref: SecretRef, env: Environment = process.env, options: SecretFileOptions = {}): string {
  if ('env' in ref) return readEnvironment(ref.env, env, `environment variable ${ref.env}`);
  if ('tfvar' in ref)
    return readEnvironment(
      `TF_VAR_${ref.tfvar}`,
      env,
      `Terraform variable ${ref.tfvar} (environment variable TF_VAR_${ref.tfvar})`,
    );
  if (typeof ref.file !== 'string' || ref.file.trim() === '')
    throw new SecretResolutionError('the secret file path is empty');
  const within = containmentOfRef(ref, options);
  const path = resolve(typeof ref.baseDir === 'string' ? ref.baseDir : '.', ref.file);
  const shown = relative(process.cwd(), path) || path;
  let bytes: Buffer;
  try {
    bytes = readContainedFileSync(path, within, { bytes: SECRET_FILE_MAX_BYTES, tooLarge: TOO_LARGE });
  } catch (error) {
    if (!(error instanceof ContainedFileError)) throw error;
    if (!error.rule)
      throw new SecretResolutionError(`secret file ${ref.file} cannot be read (${shown}): ${error.message}`);
    // A file outside its containment (symlinks resolved), not a regular file, or too large.
    const advice = error.message.includes(' outside ') ? '; keep secret files inside it, or use { env: NAME }' : '';
    throw new SecretResolutionError(`secret file ${ref.file} ${error.message}${advice}`, true);
  }
  const value = bytes.toString('utf8').replace(/[\r\n]+$/, '');
  if (value === '') throw new SecretResolutionError(`secret file ${ref.file} is empty (${shown})`);
  return value;
}

/** The fields a secret is declared for. */
export type SecretField = 'password' | 'preshared_key';

/**
 * Whether a reference could be read now, without reading it (secrets are read where used): null when it can, the reason
 * when it cannot (a variable unset or empty, a file missing or empty). A file that breaks a rule
 * (outside its containment, not a regular file, too large) throws SecretResolutionError with `rule`
 * set: that is an error everywhere, and the file is never read.
 */
export function probeSecret(
  ref: SecretRef,
  env: Environment = process.env,
  options: SecretFileOptions = {},
): string | null {
  if (!('file' in ref)) {
    try {
      resolveSecret(ref, env); // a variable: looking it up is all there is to it
      return null;
    } catch (error) {
      if (error instanceof SecretResolutionError && !error.rule) return error.message;
      throw error;
    }
  }
  if (typeof ref.file !== 'string' || ref.file.trim() === '')
    throw new SecretResolutionError('the secret file path is empty');
  const within = containmentOfRef(ref, options);
  const path = resolve(typeof ref.baseDir === 'string' ? ref.baseDir : '.', ref.file);
  const shown = relative(process.cwd(), path) || path;
  let size: number;
  try {
    size = checkContainedFile(path, within, { bytes: SECRET_FILE_MAX_BYTES, tooLarge: TOO_LARGE });
  } catch (error) {
    if (!(error instanceof ContainedFileError)) throw error;
    if (!error.rule) return `secret file ${ref.file} cannot be read (${shown}): ${error.message}`;
    const advice = error.message.includes(' outside ') ? '; keep secret files inside it, or use { env: NAME }' : '';
    throw new SecretResolutionError(`secret file ${ref.file} ${error.message}${advice}`, true);
  }
  return size === 0 ? `secret file ${ref.file} is empty (${shown})` : null;
}

/** What the server would say of `value` in `field`, or null when it takes it (the model's own checks). */
export function secretValueProblem(field: SecretField, value: string): string | null {
  if (field === 'preshared_key') {
    const messages = wireguardKeyMessages(value);
    return messages.length > 0 ? messages.join(', ') : null;
  }
  const errors: Record<string, string[]> = {};
  checkPassword(value, value, errors);
  const messages = errors.password ?? [];
  return messages.length > 0 ? messages.join(', ') : null;
}

/**
 * A declared secret, read on first use only (model/secret.ts): its value checked as the server
 * checks `field`, so that a value it would refuse is found where it is read. A file that breaks a
 * rule by then is unreadable (its message says which rule); nothing of the value is ever shown.
 * `at`: where the reference is declared (`file:line:column`), for messages.
 */
export function lazySecret(
  ref: SecretRef,
  field: SecretField,
  env: Environment = process.env,
  options: SecretFileOptions = {},
  at?: string,
): Secret {
  return new Secret(
    (): SecretRead => {
      let value: string;
      try {
        value = resolveSecret(ref, env, options);
      } catch (error) {
        if (error instanceof SecretResolutionError) return { unreadable: error.message };
        throw error;
      }
      const problem = secretValueProblem(field, value);
      return problem === null ? { value } : { invalid: problem };
    },
    ref,
    at,
  );
}
