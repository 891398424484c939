import { describe, expect, it } from 'vitest';

// Imports the built package by its own name, as a user's project would after `npm install netform`.
describe('package entry points', () => {
  it('netform exports the library API', async () => {
    const netform = await import('netform');
    for (const name of [
      'loadDesiredState',
      'checkDesiredState',
      'planChanges',
      'renderPlan',
      'applyPlan',
      'fetchLiveState',
      'ApiClient',
      'checkDeviceInput',
      'connectTo',
      'planAgainstServer',
      'applyPlanned',
      'applySaved',
      'checkDrift',
      'runTests',
      'exportServer',
      'run',
      'memoryIo',
    ]) {
      expect(typeof (netform as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('netform/schemas/*.json are the JSON Schemas: the desired state, and the plan (saved or printed)', async () => {
    const { default: plan } = await import('netform/schemas/plan.schema.json', { with: { type: 'json' } });
    expect(plan.$id).toBe('https://netform.dev/schemas/plan.schema.json');
    expect(Object.keys(plan.$defs)).toEqual(expect.arrayContaining(['plan', 'savedPlan', 'change']));
    const { default: desired } = await import('netform/schemas/netform.schema.json', { with: { type: 'json' } });
    expect(desired.title).toBe('netform desired state');
  });

  it('netform exports the command line as run(argv, io)', async () => {
    const { memoryIo, run } = (await import('netform')) as typeof import('../../../src/index.js');
    const io = memoryIo({ cwd: process.cwd() });
    expect(await run(['--version'], io)).toBe(0);
    expect(io.stdout()).toMatch(/^\d+\.\d+\.\d+\n$/);
    const usage = memoryIo({ cwd: process.cwd() });
    expect(await run(['plan'], usage)).toBe(1);
    expect(usage.stderr()).toMatch(/^error: required option '-f, --file <path>' not specified/);
  });

  it('netform/cdktf exports the constructs', async () => {
    const cdktf = await import('netform/cdktf');
    expect(typeof cdktf.FirezoneStack).toBe('function');
  });
});
