/**
 * Drift as an operation: a plan that is never applied. One check here; on a cron schedule (one
 * report per run, to the caller's writer as a JSON line, a report file and a webhook) in
 * drift-schedule.ts, which a single check never loads (cron, the sinks, their HTTP client).
 * Never writes to the server.
 */
import type { Plan } from '../plan/types.js';
import type { OpEvents } from './events.js';
import { planAgainstServer, type PlanRequest } from './plan.js';

export type DriftRequest = Pick<PlanRequest, 'file' | 'connect' | 'load' | 'input' | 'instant'>;

/** One check's plan, and whether it is drift: changes planned, or pending (src/plan/outcome.ts). */
export interface DriftCheck {
  plan: Plan;
  status: 'clean' | 'drift';
}

/** One check: the files and the server read (at the same time), and planned, as `netform plan` does. */
export async function checkDrift(
  request: DriftRequest,
  events: OpEvents = {},
  signal?: AbortSignal,
): Promise<DriftCheck> {
  // Drift never sends a secret: it reads no password, and lists a key it cannot compare as not checked.
  const { plan, differs } = await planAgainstServer({ ...request, unreadableSecrets: 'report' }, events, signal);
  return { plan, status: differs ? 'drift' : 'clean' };
}
