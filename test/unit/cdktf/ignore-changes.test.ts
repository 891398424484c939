/**
 * FirezoneStack can say everything the YAML format can that W3.5 added (whatever validate accepts,
 * plan can plan, and the construct can write): `ignoreChanges` on a user or device (the resource's
 * `lifecycle.ignore_changes`), and `settings.ignore_changes` and `settings.drift`.
 */
import { App } from 'cdktf';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { loadDesiredState } from '../../../src/desired/index.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('FirezoneStack ignoreChanges and the W3.5 settings', () => {
  it('writes lifecycle.ignore_changes and the settings in the YAML shape; the loader reads them back', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-ignore-'));
    try {
      const app = new App({ outdir });
      new FirezoneStack(app, 'company', {
        settings: {
          drift: { undeclared: 'all' },
          ignore_changes: { users: ['role'], devices: ['endpoint'] },
        },
        users: [
          {
            email: 'ann@example.com',
            ignoreChanges: ['role'],
            devices: [{ name: 'laptop', publicKey: KEY, ignoreChanges: ['allowed_ips', 'mtu'] }],
          },
          { email: 'bob@example.com' },
        ],
      });
      app.synth();
      const file = join(outdir, 'stacks', 'company', 'cdk.tf.json');
      const stack = JSON.parse(await readFile(file, 'utf8'));
      expect(stack.resource.firezone_user.ann_example_com.lifecycle).toEqual({ ignore_changes: ['role'] });
      expect(stack.resource.firezone_user.bob_example_com).not.toHaveProperty('lifecycle');
      expect(stack.resource.firezone_device.ann_example_com_laptop.lifecycle).toEqual({
        ignore_changes: ['allowed_ips', 'mtu'],
      });

      const loaded = await loadDesiredState(file);
      if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
      const [ann, bob] = loaded.state.users;
      expect(ann!.ignore_changes).toEqual(['role']);
      expect(ann!.devices[0]!.ignore_changes).toEqual(['allowed_ips', 'mtu']);
      expect(bob!.ignore_changes).toBeUndefined();
      expect(loaded.state.settings.drift).toEqual({ undeclared: 'all' });
      expect(loaded.state.settings.ignore_changes).toEqual({ users: ['role'], devices: ['endpoint'] });
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});
