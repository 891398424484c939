/**
 * Loading desired states at and past their bounds (security review F11): a list of 130,000
 * entries loads (no `push(...spread)` on the way), and CDKTF JSON nested deeper than
 * CDKTF_MAX_DEPTH is a located error instead of "Maximum call stack size exceeded". And
 * `__proto__` keys in a stack's netform sections (F13): copied as own keys, so the unknown-key
 * check and the section rules apply to them as to any other key.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CDKTF_MAX_DEPTH, loadCdktfStack } from '../../../src/desired/cdktf/load.js';
import { loadDesiredState } from '../../../src/desired/index.js';
import type { Diagnostic, LoadResult } from '../../../src/desired/types.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'netform-bounds-'));
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

describe('a list of 130,000 entries', () => {
  it('loads, in YAML (the review counted a crash from about 120,000)', { timeout: 120_000 }, async () => {
    const count = 130_000;
    const lines = ['version: 1', 'rules:'];
    for (let i = 0; i < count; i++)
      lines.push(`  - {action: accept, destination: 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32}`);
    const file = join(dir, 'global-rules.yaml');
    await writeFile(file, `${lines.join('\n')}\n`);
    const result = await loadDesiredState(file, { env: {} });
    expect(result.ok, result.ok ? '' : JSON.stringify(result.diagnostics.slice(0, 3))).toBe(true);
    expect(result.ok && result.state.rules.length).toBe(count);
  });
});

describe('CDKTF nesting', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it(`up to ${CDKTF_MAX_DEPTH} levels is read (and checked as usual)`, async () => {
    // root, "//", netform, absent: 4 levels; the list makes up the rest.
    const diagnostics = diagnosticsOf(
      await stack(`{"//": {"netform": {"absent": {"users": ${nested(CDKTF_MAX_DEPTH - 4)}}}}}`),
    );
    expect(diagnostics).toEqual([
      expect.objectContaining({ line: 1, path: 'netform.absent.users[0]', message: 'must be a string' }),
    ]);
  });

  it('deeper is one located error, also 200,000 levels deep and also in JSON that does not parse', async () => {
    const prefix = '{"//": {"netform": {"settings": ';
    for (const text of [
      `${prefix}${nested(CDKTF_MAX_DEPTH - 2)}}}}`,
      `${prefix}${nested(200_000)}}}}`,
      `${prefix}\n  ${'['.repeat(200_000)}`,
    ]) {
      const diagnostics = diagnosticsOf(await stack(text));
      expect(diagnostics).toHaveLength(1);
      const [only] = diagnostics;
      expect(only!.message).toBe(
        `nests objects and arrays more than ${CDKTF_MAX_DEPTH} levels deep, which netform does not read (a synthesized stack needs a handful)`,
      );
      expect(only!.file).toMatch(/cdk\.tf\.json$/);
      // At the first bracket past the bound: 3 levels of objects before the list.
      const line = text.includes('\n') ? 2 : 1;
      const column = line === 1 ? prefix.length + CDKTF_MAX_DEPTH - 3 + 1 : 3 + CDKTF_MAX_DEPTH - 3;
      expect([only!.line, only!.column]).toEqual([line, column]);
    }
  });

  it('brackets inside strings do not count', async () => {
    const result = await stack(
      JSON.stringify({
        resource: { firezone_user: { a: { email: `${'['.repeat(5000)}\\"{@example.com` } } },
      }),
    );
    expect(diagnosticsOf(result).map((d) => d.path)).toEqual(['firezone_user.a.email']);
  });
});

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
