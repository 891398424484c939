/**
 * Output longer than a JavaScript string can be (a JSON plan, a saved plan or a check's output of a
 * very large change) is an expected failure: one line saying what was too large and what to do,
 * never the RangeError of V8 or the boundary's internal-error line that it was before.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../../src/cli/boundary.js';
import { wholeOutput } from '../../../src/cli/output.js';

/** V8's failure for a string over its length limit, made without allocating it. */
const tooLong = () => 'x'.repeat(2 ** 30);

describe('output too large to write', () => {
  it('was the internal-error line of a RangeError before', () => {
    let thrown: unknown;
    try {
      tooLong();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RangeError);
    expect(describeFailure(thrown).text).toMatch(/^error: Invalid string length \(internal error/);
  });

  it.each([
    ['plan_json', /^error: the JSON plan is too large to write .*: plan part of the change at a time .*`netform plan`/],
    ['saved_plan', /^error: the saved plan is too large to write .*`apply -f` without a saved plan$/],
    ['check', /^error: the check's output is too large to write .*`--format text`/],
  ] as const)('%s: one line saying what was too large and what to do, exit 1', (output, said) => {
    let thrown: unknown;
    try {
      wholeOutput(output, tooLong);
    } catch (error) {
      thrown = error;
    }
    const { text, code } = describeFailure(thrown);
    expect(text.trimEnd()).toMatch(said);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
    expect(text).not.toMatch(/RangeError|Invalid string length|internal error/);
    expect(code).toBe(1);
  });

  it('passes any other failure on as it is, and the output when it fits', () => {
    expect(wholeOutput('plan_json', () => 'fits')).toBe('fits');
    const other = new RangeError('Maximum call stack size exceeded');
    expect(() =>
      wholeOutput('plan_json', () => {
        throw other;
      }),
    ).toThrow(other);
  });
});
