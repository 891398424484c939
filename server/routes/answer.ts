import type { FastifyReply } from 'fastify';

/** The content type Fastify gives a serialized JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers of frozen views, by view (see answerOne). */
const bodies = new WeakMap<object, ReturnType<FastifyReply['serialize']>>();

/**
 * A GET's `{ "data": view }` answer. A frozen view is one the store keeps until anything commits
 * (services/views.ts, shownDevice): its answer is serialized once, by the route's own response
 * serializer (`reply.serialize`, the one Fastify would use for this 200), and those bytes are sent
 * again while the view is kept. Any other view is returned for Fastify to serialize as usual.
 */
export function answerOne(reply: FastifyReply, view: object): FastifyReply | { data: object } {
  if (!Object.isFrozen(view)) return { data: view };
  let body = bodies.get(view);
  if (body === undefined) bodies.set(view, (body = reply.serialize({ data: view })));
  return reply.type(JSON_TYPE).send(body);
}

/** The bytes kept with a frozen view by an earlier answerOne, if any (see server/kept-gets.ts). */
export function keptAnswer(view: object): string | undefined {
  return bodies.get(view) as string | undefined;
}
