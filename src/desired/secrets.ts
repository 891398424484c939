/**
 * Secret references: `{ env: NAME }`, `{ file: PATH }` (relative to the declaring file's folder)
 * and `{ tfvar: NAME }` (a Terraform variable, read from `TF_VAR_<NAME>`). Resolving one gives the
 * value; the errors name the reference, never a value.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { SecretRef } from '../model/secret.js';

export type Environment = Record<string, string | undefined>;

/** A reference that cannot be resolved; the message names the reference and is safe to print. */
export class SecretResolutionError extends Error {
  constructor(message: string) {
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

function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return code ?? 'cannot be read';
}

/**
 * The value a reference points at. Files lose their trailing line breaks (editors and `echo` add
 * one), nothing else. Throws SecretResolutionError when the variable or file is missing or empty.
 */
export function resolveSecret(ref: SecretRef, env: Environment = process.env): string {
  if ('env' in ref) return readEnvironment(ref.env, env, `environment variable ${ref.env}`);
  if ('tfvar' in ref)
    return readEnvironment(
      `TF_VAR_${ref.tfvar}`,
      env,
      `Terraform variable ${ref.tfvar} (environment variable TF_VAR_${ref.tfvar})`,
    );
  if (ref.file.trim() === '') throw new SecretResolutionError('the secret file path is empty');
  const misplaced = misplacedSecretFile(ref);
  if (misplaced) throw new SecretResolutionError(misplaced);
  const path = resolve(ref.baseDir ?? '.', ref.file);
  const shown = relative(process.cwd(), path) || path;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new SecretResolutionError(`secret file ${ref.file} cannot be read (${shown}): ${fileProblem(error)}`);
  }
  const value = text.replace(/[\r\n]+$/, '');
  if (value === '') throw new SecretResolutionError(`secret file ${ref.file} is empty (${shown})`);
  return value;
}

const repositoryRoots = new Map<string, string | null>();

/** The git work tree holding `folder` (the nearest ancestor with a `.git`), or null outside git. */
function repositoryRootOf(folder: string): string | null {
  const start = resolve(folder);
  const known = repositoryRoots.get(start);
  if (known !== undefined) return known;
  let root: string | null = null;
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) {
      root = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  repositoryRoots.set(start, root);
  return root;
}

/**
 * Why a `{ file: PATH }` reference may not be used, or null: when the declaring file is inside a git
 * repository, the secret file must lie inside that repository too. A pull request could otherwise point a password at any file of
 * the machine that applies it (an SSH key, a cloud credential) and have apply send its contents.
 * Checked without reading the file, so `validate` can check it where the secret is not present.
 */
export function misplacedSecretFile(ref: { file: string; baseDir?: string }): string | null {
  if (ref.baseDir === undefined || ref.file.trim() === '') return null; // no declaring file: nothing to be inside
  const base = ref.baseDir;
  const root = repositoryRootOf(base);
  if (root === null) return null;
  const inside = relative(root, resolve(base, ref.file));
  if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) return null;
  const shownRoot = relative(process.cwd(), root) || '.';
  return `secret file ${ref.file} is outside the repository (${shownRoot}); keep secret files inside it, or use { env: NAME }`;
}
