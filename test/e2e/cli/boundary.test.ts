/**
 * The command line's error boundary (src/cli/boundary.ts; the bin's last resort in process.ts):
 * what any failure prints. Expected failures are one `error:` line; anything else says where it
 * was thrown; NETFORM_DEBUG adds the stack and never an error's own properties; nothing nobody
 * handled is printed by Node's inspector.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeFailure, thrownAt } from '../../../src/cli/boundary.js';
import { CliError, ExitCode } from '../../../src/cli/exit.js';
import { Secrets } from '../../../src/cli/io.js';

const TOKEN = 'nf_boundarytest_0123456789abcdef';

/** An error as got makes them: its own properties hold the request's options, the token among them. */
function gotLikeError(): Error {
  const error = new Error('This operation was aborted.');
  Object.assign(error, { code: 'ERR_ABORTED', options: { headers: { authorization: `Bearer ${TOKEN}` } } });
  return error;
}

describe('describeFailure', () => {
  it('prints an expected failure as its message and keeps its exit code', () => {
    expect(describeFailure(new CliError('the plan is stale', ExitCode.stale))).toEqual({
      text: 'error: the plan is stale\n',
      code: ExitCode.stale,
    });
  });

  it('prints an unexpected error with where it was thrown and the hint, exit 1, and nothing of its properties', () => {
    const { text, code } = describeFailure(gotLikeError());
    expect(code).toBe(ExitCode.error);
    expect(text).toMatch(
      /^error: This operation was aborted\. \(internal error at test\/e2e\/cli\/boundary\.test\.ts:\d+; NETFORM_DEBUG=1 shows the stack\)\n$/,
    );
    expect(text).not.toContain(TOKEN);
  });

  it('with NETFORM_DEBUG adds the stack, still never the properties', () => {
    const { text } = describeFailure(gotLikeError(), { debug: true });
    expect(text.split('\n')[1]).toBe('Error: This operation was aborted.');
    expect(text).toMatch(/\n\s+at .*cli\/boundary\.test\.ts:\d+/);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('authorization');
  });

  it("cuts the run's secrets, and NETFORM_TOKEN, out of any message", () => {
    const secrets = new Secrets();
    secrets.add(TOKEN);
    expect(describeFailure(new CliError(`the server refused ${TOKEN}`), { secrets }).text).toBe(
      'error: the server refused (secret)\n',
    );
    expect(describeFailure(new Error(`odd ${TOKEN}`), { secrets, debug: true }).text).not.toContain(TOKEN);
    const env = { NETFORM_TOKEN: ` ${TOKEN}\n` };
    expect(describeFailure(new CliError(`refused ${TOKEN}`), { env }).text).toBe('error: refused (secret)\n');
    // Another run's secrets are not this one's.
    expect(describeFailure(new CliError(`refused ${TOKEN}`)).text).toBe(`error: refused ${TOKEN}\n`);
  });

  it('names a thrown non-Error by its type only', () => {
    expect(describeFailure({ headers: { authorization: TOKEN } }).text).toMatch(
      /^error: a object was thrown \(internal error; NETFORM_DEBUG=1 shows the stack\)\n$/,
    );
  });

  it("finds the first frame in netform's own files", () => {
    const error = new Error('x');
    error.stack = [
      'Error: x',
      '    at Request.emit (/somewhere/node_modules/got/dist/source/core/index.js:10:5)',
      `    at loadDesiredAndLive (${fileURLToPath(new URL('../../../dist/src/cli/plan.js', import.meta.url))}:97:18)`,
    ].join('\n');
    expect(thrownAt(error)).toBe('dist/src/cli/plan.js:97');
  });
});

/** A node process that installs the bin's boundary, then fails the way `script` says. */
function runWithBoundary(
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  const bin = new URL('../../../dist/src/cli/process.js', import.meta.url).href;
  const source = `const { installErrorBoundary, processIo } = await import(${JSON.stringify(bin)}); installErrorBoundary(processIo()); ${script}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      env: { ...process.env, NETFORM_DEBUG: '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const FAILURES: Record<string, string> = {
  'an uncaught exception': `const e = new Error('boom'); e.options = { headers: { authorization: 'Bearer ${TOKEN}' } }; setTimeout(() => { throw e; });`,
  'an unhandled rejection': `const e = new Error('boom'); e.options = { headers: { authorization: 'Bearer ${TOKEN}' } }; Promise.reject(e);`,
  "an 'error' event nobody listens to": `const { EventEmitter } = await import('node:events'); const e = new Error('boom'); e.options = { headers: { authorization: 'Bearer ${TOKEN}' } }; new EventEmitter().emit('error', e);`,
};

describe('installErrorBoundary', () => {
  for (const [what, script] of Object.entries(FAILURES)) {
    it(`prints ${what} as one line, never inspected, and exits 1`, async () => {
      const { code, stderr } = await runWithBoundary(script);
      expect(code).toBe(1);
      expect(stderr).toMatch(/^error: boom \(internal error at \S+:\d+; NETFORM_DEBUG=1 shows the stack\)\n$/);
      const debug = await runWithBoundary(script, { NETFORM_DEBUG: '1' });
      expect(debug.code).toBe(1);
      expect(debug.stderr).toContain('Error: boom\n    at ');
      for (const output of [stderr, debug.stderr]) {
        expect(output).not.toContain(TOKEN);
        expect(output).not.toContain('authorization');
      }
    });
  }
});
