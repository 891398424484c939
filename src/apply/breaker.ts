/**
 * Notices a server that went away during an apply: after `threshold` writes in a row failed
 * without an answer (refused, timed out, dropped), it trips, and apply starts no new write. One
 * write that gets any answer resets the count. Pure: it only watches the outcomes it is shown.
 */
import { ApiError } from '../client/index.js';
import type { NetworkProblem } from '../client/errors.js';
import type { ChangeResult } from './executor.js';

export class ServerGoneBreaker {
  #consecutive = 0;
  #reason: string | null = null;

  constructor(readonly threshold = 3) {}

  /** Feed it every settled change (ApplyOptions.onSettled). */
  observe(result: ChangeResult, error?: unknown): void {
    if (this.#reason !== null || result.status === 'not_attempted') return;
    if (result.status === 'failed' && error instanceof ApiError && error.serverUnreachable) {
      this.#consecutive++;
      if (this.#consecutive >= this.threshold) {
        this.#reason = `the server stopped answering (${this.#consecutive} writes in a row: ${unanswered(error.problem!, error.reason)} at ${error.server ?? 'the server'})`;
      }
      return;
    }
    this.#consecutive = 0;
  }

  /** Why no new write should start, or null (ApplyOptions.shouldStart). */
  get tripped(): string | null {
    return this.#reason;
  }
}

/** How the breaker's reason names a write that got no answer. */
function unanswered(problem: NetworkProblem, reason: string): string {
  if (problem === 'refused') return 'connection refused';
  if (problem === 'host_not_found') return 'host not found';
  if (problem === 'timeout') return 'no answer in time';
  return `connection dropped (${reason})`;
}
