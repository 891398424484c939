/** The committed bindings are exactly what `npm run generate:cdktf` produces from the committed schema. */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const committed = join(root, 'src', 'cdktf', 'generated');
const run = promisify(execFile);

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('generated CDKTF bindings', () => {
  let out: string | undefined;
  afterEach(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('are identical to a fresh generation from schemas/terraform-provider.json', async () => {
    out = await mkdtemp(join(tmpdir(), 'netform-cdktf-gen-'));
    // A PATH without terraform: generation must not need one.
    const { stdout } = await run(process.execPath, [join(root, 'scripts', 'cdktf-generate.mjs'), '--out', out], {
      cwd: root,
      env: { PATH: '/nonexistent', HOME: out },
    });
    expect(stdout).toContain('generated CDKTF bindings');

    const fresh = await listFiles(out);
    const current = await listFiles(committed);
    expect(fresh).toEqual(current);
    expect(fresh).toEqual(
      expect.arrayContaining([
        'package.json',
        'providers/firezone/device/index.ts',
        'providers/firezone/provider/index.ts',
        'providers/firezone/rule/index.ts',
        'providers/firezone/user/index.ts',
      ]),
    );
    for (const file of fresh) {
      expect(await readFile(join(out, file), 'utf8'), file).toBe(await readFile(join(committed, file), 'utf8'));
    }
    expect(JSON.parse(await readFile(join(committed, 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
  });

  it('declare every resource and attribute of the schema', async () => {
    const schema = JSON.parse(await readFile(join(root, 'schemas', 'terraform-provider.json'), 'utf8'));
    const provider = schema.provider_schemas['registry.terraform.io/jindrichskupa/firezone'];
    expect(Object.keys(provider.resource_schemas).sort()).toEqual([
      'firezone_device',
      'firezone_rule',
      'firezone_user',
    ]);
    for (const [type, resource] of Object.entries<any>(provider.resource_schemas)) {
      const folder = type.replace('firezone_', '');
      const source = await readFile(join(committed, 'providers', 'firezone', folder, 'index.ts'), 'utf8');
      expect(source).toContain(`terraformResourceType: '${type}'`);
      for (const [attribute, spec] of Object.entries<any>(resource.block.attributes)) {
        // Every attribute gets a getter; only configurable ones are synthesized.
        expect(source, `${type}.${attribute}`).toMatch(new RegExp(`Attribute\\('${attribute}'\\)`));
        if (!spec.computed || spec.optional)
          expect(source, `${type}.${attribute}`).toMatch(new RegExp(`\\b${attribute}: cdktf\\.`));
      }
    }
  });
});
