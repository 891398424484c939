import type { FastifyInstance } from 'fastify';
import { showConfiguration, updateConfiguration } from '../services/configuration.js';
import { acting, type ServiceContext } from '../services/context.js';
import { unwrap } from './body.js';
import { CONFIGURATION_SCHEMAS } from './schemas.js';

/** The singleton of upstream 0.7.36: show and update (PUT and PATCH alike), no create or delete. */
export function configurationRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get('/v0/configuration', { schema: CONFIGURATION_SCHEMAS.show }, async () => ({
    data: await showConfiguration(ctx),
  }));
  app.route({
    method: ['PATCH', 'PUT'],
    url: '/v0/configuration',
    schema: CONFIGURATION_SCHEMAS.update,
    handler: async (request) => ({
      data: await updateConfiguration(acting(ctx, request), unwrap(request.body, 'configuration')),
    }),
  });
}
