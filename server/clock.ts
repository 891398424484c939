/**
 * Timestamps of the /v0 contract: UTC ISO 8601 with microseconds and a `Z` suffix.
 * The clock never returns the same value twice in one process, so `updated_at` changes on every
 * update even when two land within one millisecond, and never goes backwards.
 */
import { performance } from 'node:perf_hooks';

export interface Clock {
  /** Microseconds since the Unix epoch, strictly increasing within one clock. */
  nowMicros(): bigint;
}

export function createClock(): Clock {
  let last = 0n;
  return {
    nowMicros() {
      const micros = BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
      last = micros > last ? micros : last + 1n;
      return last;
    },
  };
}

/** The text up to the seconds of the last second formatted: every write formats one or two timestamps. */
let lastSecond = -1n;
let lastSecondText = '';

export function formatTimestamp(micros: bigint): string {
  if (micros >= 0n) {
    const second = micros / 1_000_000n;
    if (second !== lastSecond) {
      lastSecondText = new Date(Number(second) * 1000).toISOString().slice(0, 19);
      lastSecond = second;
    }
    return `${lastSecondText}.${(micros % 1_000_000n).toString().padStart(6, '0')}Z`;
  }
  const millis = micros / 1000n;
  const iso = new Date(Number(millis)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${iso.slice(0, 19)}.${fraction}Z`;
}

export function parseTimestamp(text: string): bigint {
  const match = /^(.{19})\.(\d{6})Z$/.exec(text);
  if (!match) return BigInt(Date.parse(text)) * 1000n;
  return BigInt(Date.parse(`${match[1]}Z`)) * 1000n + BigInt(match[2]!);
}

/** A timestamp later than both the clock's now and `after` (a stored timestamp). */
export function timestampAfter(clock: Clock, after: string | null): string {
  const now = clock.nowMicros();
  if (after === null) return formatTimestamp(now);
  const floor = parseTimestamp(after) + 1n;
  return formatTimestamp(now > floor ? now : floor);
}

export function nowTimestamp(clock: Clock): string {
  return formatTimestamp(clock.nowMicros());
}
