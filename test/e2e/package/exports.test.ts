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

  it('netform/cdktf exports the constructs', async () => {
    const cdktf = await import('netform/cdktf');
    expect(typeof cdktf.FirezoneStack).toBe('function');
  });
});
