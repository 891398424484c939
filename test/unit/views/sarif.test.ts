/**
 * W3.6: SARIF 2.1.0 logs, valid against the vendored OASIS schema, each result at the file (URI
 * relative to the repository root) and line it is about; CDKTF results without a location.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sarifRoot } from '../../../src/ops/validate.js';
import { NETFORM_VERSION } from '../../../src/version.js';
import { findingsOfDiagnostics, sarifLog, sarifUri } from '../../../src/views/sarif.js';
import packageJson from '../../../package.json' with { type: 'json' };
import { sarifSchemaErrors } from '../../helpers/sarif.js';

const dir = mkdtempSync(join(tmpdir(), 'netform-sarif-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOOL = { name: 'netform', version: '0.1.0' };

describe('sarifLog', () => {
  it('is valid against the SARIF 2.1.0 schema, with each result at its URI and line', () => {
    mkdirSync(join(dir, 'repo', '.git'), { recursive: true });
    mkdirSync(join(dir, 'repo', 'desired', 'a team'), { recursive: true });
    const cwd = join(dir, 'repo', 'desired');
    const root = sarifRoot(cwd);
    expect(root).toBe(join(dir, 'repo'));
    const log = sarifLog(
      TOOL,
      findingsOfDiagnostics(
        [{ file: 'a team/users.yaml', line: 7, column: 14, path: 'users[0].devices[0].mtu', message: 'is too large' }],
        [
          { file: 'netform.yaml', line: 3, column: 15, path: 'users[1].password', message: 'NOPE is not set\u001b[2J' },
          { file: 'cdk.tf.json', line: 20, path: 'firezone_device.laptop.mtu', message: 'is invalid' },
          { message: 'a problem of no file' },
        ],
      ),
      root,
      cwd,
    ) as any;
    expect(sarifSchemaErrors(log)).toEqual([]);
    // The schema is really applied: a level SARIF does not know, or a line 0, is refused.
    const broken = structuredClone(log);
    broken.runs[0].results[0].level = 'fatal';
    broken.runs[0].results[1].locations[0].physicalLocation.region.startLine = 0;
    expect(sarifSchemaErrors(broken)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/runs\/0\/results\/0\/level: /),
        expect.stringMatching(/^\/runs\/0\/results\/1\/locations\/0\/physicalLocation\/region\/startLine: /),
      ]),
    );
    const results = log.runs[0].results;
    expect(results.map((r: any) => [r.ruleId, r.level, r.locations?.[0]?.physicalLocation])).toEqual([
      [
        'desired-state/error',
        'error',
        { artifactLocation: { uri: 'desired/a%20team/users.yaml' }, region: { startLine: 7, startColumn: 14 } },
      ],
      [
        'desired-state/warning',
        'warning',
        { artifactLocation: { uri: 'desired/netform.yaml' }, region: { startLine: 3, startColumn: 15 } },
      ],
      ['desired-state/warning', 'warning', undefined],
      ['desired-state/warning', 'warning', undefined],
    ]);
    expect(results[1].message.text).toBe('users[1].password: NOPE is not set\\u001b[2J');
    expect(results[2].message.text).toBe('firezone_device.laptop.mtu: is invalid');
  });

  it('outside git, URIs are relative to the working directory; a file outside it has no location', () => {
    const cwd = join(dir, 'plain');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'x.yaml'), '');
    expect(sarifRoot(cwd)).toBe(cwd);
    expect(sarifUri('x.yaml', cwd, cwd)).toBe('x.yaml');
    expect(sarifUri('../elsewhere.yaml', cwd, cwd)).toBeNull();
  });

  it("names netform's own version", () => {
    expect(NETFORM_VERSION).toBe(packageJson.version);
  });
});
