/**
 * The command line's one set of number parsers (src/cli/flags/numbers.ts) and its stop requests
 * (src/cli/signals.ts): what each accepts, what it refuses and with which words.
 */
import { InvalidArgumentError } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/exit.js';
import {
  parseByteCount,
  parseCount,
  parseDays,
  parseNonNegative,
  parsePort,
  parsePortFromEnv,
  parsePositive,
  parseRetries,
  parseTimeout,
  parseWholeSeconds,
  secondsAsMs,
  wholeNumber,
  wholeNumberFromEnv,
} from '../../../src/cli/flags/numbers.js';
import { memoryIo } from '../../../src/cli/io.js';
import { processStops } from '../../../src/cli/process.js';
import { watchStopRequests, type StopWatch } from '../../../src/cli/signals.js';

describe('wholeNumber', () => {
  it('reads digits only, blanks around them allowed, within the range', () => {
    expect(wholeNumber('0')).toBe(0);
    expect(wholeNumber(' 42 ')).toBe(42);
    for (const text of ['', ' ', '-1', '+1', '1.5', '1e3', '0x10', '12a', 'Infinity'])
      expect(wholeNumber(text)).toBeNull();
    expect(wholeNumber('0', { min: 1 })).toBeNull();
    expect(wholeNumber('21', { max: 20 })).toBeNull();
    expect(wholeNumber('000080', { max: 65535, digits: 5 })).toBeNull();
  });
});

describe('flag parsers', () => {
  const refusal = (parse: (text: string) => number, text: string) => {
    try {
      parse(text);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      return (error as Error).message;
    }
    throw new Error(`${text} was accepted`);
  };

  it('each accepts its range and refuses the rest in its own words', () => {
    expect(parseNonNegative('0')).toBe(0);
    expect(refusal(parseNonNegative, '-1')).toBe('expected a whole number, 0 or more');
    expect(parsePositive('8')).toBe(8);
    expect(refusal(parsePositive, '0')).toBe('expected a whole number, 1 or more');
    expect(parsePort('0')).toBe(0);
    expect(parsePort('65535')).toBe(65535);
    expect(refusal(parsePort, '65536')).toBe('expected a port number from 0 to 65535');
    expect(parseByteCount('1')).toBe(1);
    expect(refusal(parseByteCount, '0')).toBe('expected a number of bytes');
    expect(parseCount('0')).toBe(0);
    expect(refusal(parseCount, 'many')).toBe('expected a whole number');
    expect(parseWholeSeconds('60')).toBe(60);
    expect(refusal(parseWholeSeconds, '0')).toBe('expected a whole number of seconds, at least 1');
    // 1 to 90 is the server's rule, refused there with its own message.
    expect(parseDays('120')).toBe(120);
    expect(refusal(parseDays, '1.5')).toBe('expected a whole number of days from 1 to 90');
  });

  it('--timeout and --retries: defaults, and an error naming the flag and the value', () => {
    expect(parseTimeout(undefined)).toBe(30_000);
    expect(parseTimeout('0.5')).toBe(500);
    expect(() => parseTimeout('0')).toThrow(new CliError('--timeout: expected a number of seconds above 0, got "0"'));
    expect(() => parseTimeout('soon')).toThrow(CliError);
    expect(parseRetries(undefined)).toBe(4);
    expect(parseRetries('20')).toBe(20);
    expect(() => parseRetries('21')).toThrow(
      new CliError('--retries (NETFORM_RETRIES): expected a whole number from 0 to 20, got "21"'),
    );
  });

  it('values from the environment', () => {
    expect(parsePortFromEnv('8080')).toBe(8080);
    expect(() => parsePortFromEnv('http')).toThrow(
      new CliError('NETFORM_PORT="http" is not a port number from 0 to 65535'),
    );
    expect(wholeNumberFromEnv(undefined)).toBeUndefined();
    expect(wholeNumberFromEnv('5')).toBe(5);
    expect(wholeNumberFromEnv('fast')).toBeUndefined();
    expect(wholeNumberFromEnv('0', { min: 1 })).toBeUndefined();
    expect(secondsAsMs('1.25')).toBe(1250);
    expect(secondsAsMs('-1')).toBeNull();
  });
});

describe('watchStopRequests', () => {
  let watch: StopWatch | undefined;
  afterEach(() => watch?.dispose());

  it('aborts its signal at the first request and tells every request, first or not', () => {
    const io = memoryIo({ cwd: '/' });
    const seen: [string, boolean][] = [];
    watch = watchStopRequests(io, (reason, first) => seen.push([reason, first]), { parent: false });
    io.requestStop('SIGTERM');
    io.requestStop('SIGINT');
    expect(watch.signal.aborted).toBe(true);
    expect(watch.signal.reason).toBe('SIGTERM');
    expect(seen).toEqual([
      ['SIGTERM', true],
      ['SIGINT', false],
    ]);
  });

  it('made unarmed, hears nothing until armed; disposed, nothing again', () => {
    const io = memoryIo({ cwd: '/' });
    const seen: string[] = [];
    watch = watchStopRequests(io, (reason) => seen.push(reason), { parent: false, armed: false });
    io.requestStop('SIGTERM');
    expect(seen).toEqual([]);
    watch.arm();
    io.requestStop('SIGINT');
    expect(seen).toEqual(['SIGINT']);
    watch.dispose();
    io.requestStop('SIGTERM');
    expect(seen).toEqual(['SIGINT']);
  });

  it("on the process's stop source, listens to SIGTERM and SIGINT while armed", () => {
    const seen: string[] = [];
    const listeners = process.listenerCount('SIGINT');
    watch = watchStopRequests({ stops: processStops }, (reason) => seen.push(reason), { parent: false, armed: false });
    expect(process.listenerCount('SIGINT')).toBe(listeners);
    watch.arm();
    expect(process.listenerCount('SIGINT')).toBe(listeners + 1);
    process.emit('SIGINT', 'SIGINT');
    expect(seen).toEqual(['SIGINT']);
    watch.dispose();
    expect(process.listenerCount('SIGINT')).toBe(listeners);
  });
});
