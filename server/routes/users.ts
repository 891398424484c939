import type { FastifyInstance } from 'fastify';
import { acting, type ServiceContext } from '../services/context.js';
import { createUser, deleteUser, listUsers, showUser, updateUser } from '../services/users.js';
import { unwrap } from './body.js';
import { USER_SCHEMAS, stringifyLists } from './schemas.js';

type WithId = { Params: { id: string } };

export function userRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const listOptions = { schema: USER_SCHEMAS.list, serializerCompiler: stringifyLists };
  app.get('/v0/users', listOptions, async () => ({ data: await listUsers(ctx) }));
  app.post('/v0/users', { schema: USER_SCHEMAS.create }, async (request, reply) => {
    const user = await createUser(acting(ctx, request), unwrap(request.body, 'user'));
    return reply.code(201).header('location', `/v0/users/${user.id}`).send({ data: user });
  });
  app.get<WithId>('/v0/users/:id', { schema: USER_SCHEMAS.show }, async (request) => ({
    data: await showUser(ctx, request.params.id),
  }));
  app.route<WithId>({
    method: ['PATCH', 'PUT'],
    url: '/v0/users/:id',
    schema: USER_SCHEMAS.update,
    handler: async (request) => ({
      data: await updateUser(acting(ctx, request), request.actor!, request.params.id, unwrap(request.body, 'user')),
    }),
  });
  app.delete<WithId>('/v0/users/:id', { schema: USER_SCHEMAS.remove }, async (request, reply) => {
    await deleteUser(acting(ctx, request), request.params.id);
    return reply.code(204).send();
  });
}
