/**
 * Why apply stopped a write, in words (the codes are src/apply/executor.ts WriteStop's, which
 * src/ops/apply.ts sets): after a result's label in the summary and in each outcome line.
 */
import type { ChangeResult, WriteStop } from '../apply/executor.js';

export function writeStopText(stop: WriteStop): string {
  switch (stop.code) {
    case 'interrupted':
      return `not started: apply was interrupted${stop.by !== undefined ? ` (${stop.by})` : ''}`;
    case 'server_gone':
      return `not started: ${stop.reason}`;
    case 'in_flight_unknown':
      return 'still in flight when apply stopped waiting: its outcome is unknown (netform plan shows it)';
  }
}

/** What a result says after its label: why it stopped, the executor's message, or nothing. */
export function resultWhy(result: Pick<ChangeResult, 'message' | 'stop'>): string | undefined {
  return result.stop ? writeStopText(result.stop) : result.message;
}
