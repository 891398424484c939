import type { FastifyInstance } from 'fastify';
import { acting, type ServiceContext } from '../services/context.js';
import { createRule, deleteRule, listRules, showRule, updateRule } from '../services/rules.js';
import { answerOne } from './answer.js';
import { unwrap } from './body.js';
import { RULE_SCHEMAS, stringifyLists } from './schemas.js';

type WithId = { Params: { id: string } };

export function ruleRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const listOptions = { schema: RULE_SCHEMAS.list, serializerCompiler: stringifyLists };
  app.get('/v0/rules', listOptions, async () => ({ data: await listRules(ctx) }));
  app.post('/v0/rules', { schema: RULE_SCHEMAS.create }, async (request, reply) => {
    const rule = await createRule(acting(ctx, request), unwrap(request.body, 'rule'));
    return reply.code(201).header('location', `/v0/rules/${rule.id}`).send({ data: rule });
  });
  app.get<WithId>('/v0/rules/:id', { schema: RULE_SCHEMAS.show }, async (request, reply) =>
    answerOne(reply, await showRule(ctx, request.params.id)),
  );
  app.route<WithId>({
    method: ['PATCH', 'PUT'],
    url: '/v0/rules/:id',
    schema: RULE_SCHEMAS.update,
    handler: async (request) => ({
      data: await updateRule(acting(ctx, request), request.params.id, unwrap(request.body, 'rule')),
    }),
  });
  app.delete<WithId>('/v0/rules/:id', { schema: RULE_SCHEMAS.remove }, async (request, reply) => {
    await deleteRule(acting(ctx, request), request.params.id);
    return reply.code(204).send();
  });
}
