/**
 * The package's entry points, imported by its own name as a user's project would after `npm install
 * netform`: by Node itself, in a node process of its own (an ES module run from the checkout, where
 * `netform` names this package), not through vitest's module runner, which would transform the
 * whole of dist/ first (V8's optimizing compiler off: it lives a second). The process prints what
 * it found as JSON; each case reads its part.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { shortLivedNodeOptions } from '../../helpers/short-lived-env.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

const LIBRARY_API = [
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
];

const SCRIPT = `
const netform = await import('netform');
const types = Object.fromEntries(${JSON.stringify(LIBRARY_API)}.map((name) => [name, typeof netform[name]]));
const { default: plan } = await import('netform/schemas/plan.schema.json', { with: { type: 'json' } });
const { default: desired } = await import('netform/schemas/netform.schema.json', { with: { type: 'json' } });
const { memoryIo, run } = netform;
const io = memoryIo({ cwd: process.cwd() });
const version = { code: await run(['--version'], io), stdout: io.stdout() };
const usageIo = memoryIo({ cwd: process.cwd() });
const usage = { code: await run(['plan'], usageIo), stderr: usageIo.stderr() };
const cdktf = await import('netform/cdktf');
process.stdout.write(JSON.stringify({
  types,
  plan: { id: plan.$id, defs: Object.keys(plan.$defs) },
  desired: { title: desired.title },
  version,
  usage,
  cdktf: { FirezoneStack: typeof cdktf.FirezoneStack },
}));
`;

interface Found {
  types: Record<string, string>;
  plan: { id: string; defs: string[] };
  desired: { title: string };
  version: { code: number; stdout: string };
  usage: { code: number; stderr: string };
  cdktf: { FirezoneStack: string };
}

let found: Found;

beforeAll(async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: shortLivedNodeOptions(process.env.NODE_OPTIONS) },
    maxBuffer: 16 * 1024 * 1024,
  });
  found = JSON.parse(stdout) as Found;
});

describe('package entry points', () => {
  it('netform exports the library API', () => {
    for (const name of LIBRARY_API) expect(found.types[name], name).toBe('function');
  });

  it('netform/schemas/*.json are the JSON Schemas: the desired state, and the plan (saved or printed)', () => {
    expect(found.plan.id).toBe('https://netform.dev/schemas/plan.schema.json');
    expect(found.plan.defs).toEqual(expect.arrayContaining(['plan', 'savedPlan', 'change']));
    expect(found.desired.title).toBe('netform desired state');
  });

  it('netform exports the command line as run(argv, io)', () => {
    expect(found.version.code).toBe(0);
    expect(found.version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(found.usage.code).toBe(1);
    expect(found.usage.stderr).toMatch(/^error: required option '-f, --file <path>' not specified/);
  });

  it('netform/cdktf exports the constructs', () => {
    expect(found.cdktf.FirezoneStack).toBe('function');
  });
});
