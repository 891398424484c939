/**
 * Every number the command line reads from a flag or the environment, parsed here: whole numbers
 * written in digits (no sign, no exponent, no fraction; blanks around them allowed) within a
 * range, and durations in seconds. Each flag keeps its own message.
 */
import { InvalidArgumentError } from 'commander';
import { CliError } from '../exit.js';

export interface WholeNumberRange {
  min?: number;
  max?: number;
  /** At most this many digits (a port: 5). */
  digits?: number;
}

/** The whole number `text` writes, when it is one within the range; else null. */
export function wholeNumber(text: string, range: WholeNumberRange = {}): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed) || trimmed.length > (range.digits ?? Infinity)) return null;
  const value = Number(trimmed);
  return value >= (range.min ?? 0) && value <= (range.max ?? Infinity) ? value : null;
}

/** A number of seconds above 0 (fractions allowed) as milliseconds; else null. */
export function secondsAsMs(text: string): number | null {
  const seconds = Number(text);
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : null;
}

/** A commander argument parser: commander prints `option '--x <n>' argument 'y' is invalid. <message>`. */
function flagParser(message: string, range: WholeNumberRange = {}): (text: string) => number {
  return (text) => {
    const value = wholeNumber(text, range);
    if (value === null) throw new InvalidArgumentError(message);
    return value;
  };
}

export const parseCount = flagParser('expected a whole number');
export const parseNonNegative = flagParser('expected a whole number, 0 or more');
export const parsePositive = flagParser('expected a whole number, 1 or more', { min: 1 });
export const parsePort = flagParser('expected a port number from 0 to 65535', { max: 65535, digits: 5 });
export const parseByteCount = flagParser('expected a number of bytes', { min: 1 });
export const parseWholeSeconds = flagParser('expected a whole number of seconds, at least 1', { min: 1 });
/** The range (1 to 90) is the server's rule, checked with its own message when the token is issued. */
export const parseDays = flagParser('expected a whole number of days from 1 to 90');

/** `--retries` / NETFORM_RETRIES (read when connecting): 0 to 20, default 4. */
export function parseRetries(text: string | undefined): number {
  if (text === undefined) return 4;
  const value = wholeNumber(text, { max: 20 });
  if (value === null)
    throw new CliError(`--retries (NETFORM_RETRIES): expected a whole number from 0 to 20, got "${text}"`);
  return value;
}

/** `--timeout` (read when connecting): seconds above 0, default 30; in milliseconds. */
export function parseTimeout(text: string | undefined): number {
  if (text === undefined) return 30_000;
  const ms = secondsAsMs(text);
  if (ms === null) throw new CliError(`--timeout: expected a number of seconds above 0, got "${text}"`);
  return ms;
}

/** NETFORM_PORT, which commander hands over unparsed. */
export function parsePortFromEnv(text: string): number {
  const value = wholeNumber(text, { max: 65535, digits: 5 });
  if (value === null) throw new CliError(`NETFORM_PORT=${JSON.stringify(text)} is not a port number from 0 to 65535`);
  return value;
}

/** A whole number from a tuning variable of the environment (tests use them), or undefined when unset or not one. */
export function wholeNumberFromEnv(text: string | undefined, range: WholeNumberRange = {}): number | undefined {
  return text === undefined ? undefined : (wholeNumber(text, range) ?? undefined);
}

/** A number of seconds from a flag (parsed) or its variable (which commander may hand over unparsed). */
export function secondsOrFail(value: number | string, variable: string): number {
  if (typeof value === 'number') return value;
  const seconds = wholeNumber(value, { min: 1 });
  if (seconds === null)
    throw new CliError(`${variable}=${JSON.stringify(value)} is not a whole number of seconds, at least 1`);
  return seconds;
}
