/**
 * The saved plans applied through this server, by seal: `netform apply PLANFILE` records its
 * plan's seal before writing anything, and a second apply of the same plan is refused. Outside
 * the /v0 contract (a Firezone server has no such thing; the client then applies as before).
 */
import { nowTimestamp } from '../clock.js';
import { BadRequestError } from '../errors.js';
import type { AppliedPlanRow } from '../store/index.js';
import { writeTransaction, type ServiceContext } from './context.js';

/** A seal as netform writes it (`hmac-sha256:` and hex) or any other printable token of bounded length. */
const SEAL = /^[\x21-\x7e]{16,200}$/;
/** The claim id of one apply: a UUID or other printable token. */
const CLAIM = /^[\x21-\x7e]{8,100}$/;

export type ClaimResult =
  /** Recorded now (201), or already recorded by this same claim: a retry of the same request (200). */
  | { status: 'recorded' | 'repeated'; row: AppliedPlanRow }
  /** Recorded earlier by another apply (409). */
  | { status: 'already'; row: AppliedPlanRow };

/** Records `seal` as applied, unless it already is (one transaction: two applies at once get one 201 and one 409). */
export async function claimAppliedPlan(ctx: ServiceContext, body: unknown): Promise<ClaimResult> {
  const { seal, claim } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof seal !== 'string' || !SEAL.test(seal) || typeof claim !== 'string' || !CLAIM.test(claim))
    throw new BadRequestError('seal and claim must be printable text');
  return writeTransaction(ctx, async (tx) => {
    const found = await tx.findAppliedPlan(seal);
    if (found) return { status: found.claim === claim ? 'repeated' : 'already', row: found };
    const row = { seal, claim, applied_at: nowTimestamp(ctx.clock) };
    await tx.insertAppliedPlan(row);
    return { status: 'recorded', row };
  });
}
