/**
 * The CDKTF constructs take the expiries YAML has (`expires` on a user, a device and a rule,
 * `roleExpires` beside role admin): written in each resource's "//" entry, read back by the loader
 * as the YAML keys, and judged by the effective state as YAML's are.
 */
import { App } from 'cdktf';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { effectiveAt } from '../../../src/desired/expiry.js';
import { loadDesiredState } from '../../../src/desired/index.js';

describe('FirezoneStack expiries', () => {
  it('writes expires and role_expires in the "//" entries; the loader reads them; they expire as in YAML', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'netform-cdktf-expiry-'));
    try {
      const app = new App({ outdir });
      const key = Buffer.alloc(32, 5).toString('base64');
      new FirezoneStack(app, 'company', {
        users: [
          {
            email: 'ann@example.com',
            role: 'admin',
            roleExpires: '2026-12-31',
            devices: [{ name: 'laptop', publicKey: key, expires: '2026-12-20T18:00:00+01:00' }],
            rules: [{ action: 'accept', destination: '10.1.0.0/16', expires: '2026-12-25' }],
          },
          { email: 'ben@example.com', expires: '2026-12-28' },
        ],
        rules: [{ action: 'accept', destination: '10.9.0.0/16', expires: '2026-12-22' }],
      });
      app.synth();
      const file = join(outdir, 'stacks', 'company', 'cdk.tf.json');
      const stack = JSON.parse(await readFile(file, 'utf8'));
      const users = Object.values<any>(stack.resource.firezone_user);
      expect(users.map((u) => u['//']?.netform)).toEqual([{ role_expires: '2026-12-31' }, { expires: '2026-12-28' }]);
      const loaded = await loadDesiredState(file);
      if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
      const [ann, ben] = loaded.state.users;
      expect(ann!.role_expires).toBe('2026-12-31');
      expect(ann!.devices[0]!.expires).toBe('2026-12-20T18:00:00+01:00');
      expect(ann!.rules[0]!.expires).toBe('2026-12-25');
      expect(ben!.expires).toBe('2026-12-28');
      expect(loaded.state.rules[0]!.expires).toBe('2026-12-22');

      const later = effectiveAt(loaded.state, new Date('2027-01-01T00:00:00Z'));
      expect(later.users.map((u) => [u.email, u.role, u.devices.length, u.rules.length])).toEqual([
        ['ann@example.com', 'unprivileged', 0, 0],
      ]);
      expect(later.absent.users).toMatchObject([{ email: 'ben@example.com', expired: '2026-12-28' }]);
      expect(later.rules).toEqual([]);
      expect(later.expiredRules?.map((r) => r.rule.destination)).toEqual(['10.1.0.0/16', '10.9.0.0/16']);
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });
});
