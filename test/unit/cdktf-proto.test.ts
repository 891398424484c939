/**
 * `__proto__` keys in a CDKTF stack's netform sections (security review F13): copied into the
 * translated document as own keys, so the schema's unknown-key check and the section rules
 * apply to them as to any other key, instead of becoming a prototype that hides them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCdktfStack } from '../../src/desired/cdktf.js';
import type { Diagnostic, LoadResult } from '../../src/desired/types.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-proto-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function diagnosticsOf(result: LoadResult): Diagnostic[] {
  if (result.ok) throw new Error('expected the load to fail');
  return result.diagnostics;
}

async function stack(text: string): Promise<LoadResult> {
  const file = join(dir, 'cdk.tf.json');
  await writeFile(file, text);
  return loadCdktfStack(file, { env: {} });
}

describe('__proto__ in a stack (F13)', () => {
  it('under the top-level netform section is an unknown key, not a prototype that skips the section checks', async () => {
    const diagnostics = diagnosticsOf(
      await stack(
        JSON.stringify({
          '//': {
            metadata: { version: '0.21.0' },
            netform: {
              ['__proto__']: { users: [{ email: 'p@example.com', role: 'admin' }] },
              settings: { prune: false },
            },
          },
          resource: { firezone_user: { alice: { email: 'alice@example.com' } } },
        }),
      ),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({
        path: 'netform.__proto__',
        message: expect.stringMatching(/^unknown key; expected one of: version, settings/),
      }),
    ]);
  });

  it("under a resource's netform keys is an unknown key too", async () => {
    const diagnostics = diagnosticsOf(
      await stack(
        JSON.stringify({
          resource: {
            firezone_user: {
              alice: { email: 'alice@example.com', '//': { netform: { ['__proto__']: { role: 'admin' } } } },
            },
          },
        }),
      ),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({
        path: 'firezone_user.alice.__proto__',
        message: expect.stringMatching(/^unknown key; expected one of: email/),
      }),
    ]);
  });
});
