import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveSecret, SecretResolutionError } from '../../../src/desired/secrets.js';

describe('resolveSecret', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netform-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads environment variables and Terraform variables (TF_VAR_<name>)', () => {
    const env = { ALICE_PASSWORD: ' spaces kept ', TF_VAR_alice_password: 'from-tf' };
    expect(resolveSecret({ env: 'ALICE_PASSWORD' }, env)).toBe(' spaces kept ');
    expect(resolveSecret({ tfvar: 'alice_password' }, env)).toBe('from-tf');
  });

  it('reads files relative to their base folder, dropping trailing line breaks only', () => {
    writeFileSync(join(dir, 'unix.psk'), 'value-one\n');
    writeFileSync(join(dir, 'windows.psk'), ' value two \r\n\r\n');
    writeFileSync(join(dir, 'none.psk'), 'value-three');
    expect(resolveSecret({ file: 'unix.psk', baseDir: dir })).toBe('value-one');
    expect(resolveSecret({ file: 'windows.psk', baseDir: dir })).toBe(' value two ');
    expect(resolveSecret({ file: join(dir, 'none.psk') })).toBe('value-three');
    expect(resolveSecret({ file: 'none.psk', baseDir: relative(process.cwd(), dir) })).toBe('value-three');
  });

  it('names what is missing, and never a value', () => {
    writeFileSync(join(dir, 'blank.psk'), '\n');
    const message = (run: () => unknown): string => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(SecretResolutionError);
        return (error as Error).message;
      }
      throw new Error('expected a SecretResolutionError');
    };
    const shown = relative(process.cwd(), dir);
    expect(message(() => resolveSecret({ env: 'NOPE' }, {}))).toBe('environment variable NOPE is not set');
    expect(message(() => resolveSecret({ env: 'EMPTY' }, { EMPTY: '' }))).toBe('environment variable EMPTY is empty');
    expect(message(() => resolveSecret({ env: '' }, {}))).toBe('the environment variable name is empty');
    expect(message(() => resolveSecret({ tfvar: 'db_password' }, {}))).toBe(
      'Terraform variable db_password (environment variable TF_VAR_db_password) is not set',
    );
    expect(message(() => resolveSecret({ file: 'gone.psk', baseDir: dir }))).toBe(
      `secret file gone.psk cannot be read (${shown}/gone.psk): no such file`,
    );
    expect(message(() => resolveSecret({ file: 'blank.psk', baseDir: dir }))).toBe(
      `secret file blank.psk is empty (${shown}/blank.psk)`,
    );
    expect(message(() => resolveSecret({ file: '.', baseDir: dir }))).toBe(
      'secret file . is not a regular file (it is a folder)',
    );
  });
});
