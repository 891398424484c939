/**
 * Bearer-token authentication for every request, before routing: a request without a valid
 * token gets 401 whether or not the resource (or the route) exists.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { UserRow } from './store/index.js';
import type { ServiceContext } from './services/context.js';
import { authenticate } from './services/tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin whose token authenticated the request. */
    actor: UserRow | null;
  }
}

export interface AuthOptions {
  ctx: ServiceContext;
}

const bearerAuth: FastifyPluginAsync<AuthOptions> = async (app: FastifyInstance, { ctx }) => {
  app.decorateRequest('actor', null);
  app.addHook('onRequest', async (request, reply) => {
    const result = await authenticate(ctx.store, ctx.clock, request.headers.authorization);
    if (!result.ok) return reply.code(401).send(result.body);
    request.actor = result.actor;
  });
};

// Applies to the whole app rather than an encapsulated child (what fastify-plugin does).
(bearerAuth as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export { bearerAuth };
