/**
 * FirezoneStack writes `tests:` and the evaluator's settings into its "//" netform entry in the
 * YAML format's shape: that entry, read as a YAML document, gives the same tests and settings.
 */
import { App } from 'cdktf';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { FirezoneStack } from '../../../src/cdktf/index.js';
import { loadDesiredState } from '../../../src/desired/index.js';

describe('FirezoneStack tests and access settings', () => {
  it('are written in the YAML shape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netform-cdktf-tests-'));
    const app = new App({ outdir: dir });
    new FirezoneStack(app, 'company', {
      users: [
        {
          email: 'alice@example.com',
          rules: [{ action: 'accept', destination: '10.1.0.0/16', portType: 'tcp', portRange: '22' }],
        },
      ],
      rules: [{ action: 'drop', destination: '10.0.0.0/8' }],
      settings: { port_rules: false, server_addresses: ['10.8.0.1'] },
      tests: [
        { name: 'alice reaches ssh', from: 'alice@example.com', to: '10.1.2.3:22/tcp', expect: 'accept' },
        { name: 'vault closed', from: '*', to: '10.9.0.5:8200/tcp', expect: 'drop' },
      ],
    });
    app.synth();
    const netform = JSON.parse(readFileSync(join(dir, 'stacks', 'company', 'cdk.tf.json'), 'utf8'))['//'].netform;
    expect(netform.tests).toEqual([
      { name: 'alice reaches ssh', from: 'alice@example.com', to: '10.1.2.3:22/tcp', expect: 'accept' },
      { name: 'vault closed', from: '*', to: '10.9.0.5:8200/tcp', expect: 'drop' },
    ]);
    try {
      const file = join(dir, 'netform.yaml');
      writeFileSync(file, stringify({ version: 1, users: [{ email: 'alice@example.com' }], ...netform }));
      const loaded = await loadDesiredState(file);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
      expect(loaded.state.tests?.map(({ source: _, ...t }) => t)).toEqual(netform.tests);
      expect(loaded.state.settings.port_rules).toBe(false);
      expect(loaded.state.settings.server_addresses).toEqual(['10.8.0.1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
