import type { FastifyInstance } from 'fastify';
import { claimAppliedPlan } from '../services/applied-plans.js';
import { acting, type ServiceContext } from '../services/context.js';

/** Where netform's own server records applied saved plans: outside /v0, behind the same admin token. */
export const APPLIED_PLANS_PATH = '/netform/applied-plans';

const ALREADY = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    errors: { type: 'object', properties: { applied_at: { type: 'array', items: { type: 'string' } } } },
  },
};

const RECORD = {
  type: 'object',
  properties: { data: { type: 'object', properties: { seal: { type: 'string' }, applied_at: { type: 'string' } } } },
};

/**
 * `POST /netform/applied-plans {seal, claim}`: 201 recorded; 200 when this same claim recorded it
 * (a retried request); 409 `{error: "already_applied", errors: {applied_at: [DATE]}}` when another
 * apply did (the date in the error map, where every client reads an error's details).
 * Hidden from the /v0 API description, which it is no part of.
 */
export function appliedPlanRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const schema = { hide: true, response: { 200: RECORD, 201: RECORD, 409: ALREADY } };
  app.post(APPLIED_PLANS_PATH, { schema }, async (request, reply) => {
    const result = await claimAppliedPlan(acting(ctx, request), request.body);
    const { seal, applied_at } = result.row;
    if (result.status === 'already')
      return reply.code(409).send({ error: 'already_applied', errors: { applied_at: [applied_at] } });
    return reply.code(result.status === 'recorded' ? 201 : 200).send({ data: { seal, applied_at } });
  });
}
