import type { FastifyInstance } from 'fastify';
import { acting, type ServiceContext } from '../services/context.js';
import { createDevice, deleteDevice, listDevices, showDevice, updateDevice } from '../services/devices.js';
import { answerOne } from './answer.js';
import { unwrap } from './body.js';
import { DEVICE_SCHEMAS, stringifyLists } from './schemas.js';

type WithId = { Params: { id: string } };

export function deviceRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const listOptions = { schema: DEVICE_SCHEMAS.list, serializerCompiler: stringifyLists };
  app.get('/v0/devices', listOptions, async () => ({ data: await listDevices(ctx) }));
  app.post('/v0/devices', { schema: DEVICE_SCHEMAS.create }, async (request, reply) => {
    const device = await createDevice(acting(ctx, request), unwrap(request.body, 'device'));
    return reply.code(201).header('location', `/v0/devices/${device.id}`).send({ data: device });
  });
  app.get<WithId>('/v0/devices/:id', { schema: DEVICE_SCHEMAS.show }, async (request, reply) =>
    answerOne(reply, await showDevice(ctx, request.params.id)),
  );
  app.route<WithId>({
    method: ['PATCH', 'PUT'],
    url: '/v0/devices/:id',
    schema: DEVICE_SCHEMAS.update,
    handler: async (request) => ({
      data: await updateDevice(acting(ctx, request), request.params.id, unwrap(request.body, 'device')),
    }),
  });
  app.delete<WithId>('/v0/devices/:id', { schema: DEVICE_SCHEMAS.remove }, async (request, reply) => {
    await deleteDevice(acting(ctx, request), request.params.id);
    return reply.code(204).send();
  });
}
