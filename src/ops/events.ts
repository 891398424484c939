/**
 * What an operation tells its caller while it runs: the end of each phase with its duration (the
 * CLI prints them with NETFORM_TIMINGS, with its memory use at that moment). Each operation's own
 * events extend this; every member is optional.
 */
export type Phase = 'load' | 'fetch' | 'diff' | 'access' | 'writes';

export interface OpEvents {
  phase?(name: Phase, ms: number): void;
}

/** Milliseconds since `started` (a performance.now() value), to a tenth. */
export function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
