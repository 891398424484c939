/**
 * Failures Fastify and Node raise before any route or hook of ours runs, answered with the
 * contract's bodies (docs/api-v0.md §2): never a framework error code, message or echo of the
 * URL. Fastify's defaults would answer `{"error":"Bad Request","code":"FST_ERR_BAD_URL",
 * "message":"'/v0/users/%zz' is not a valid url component",...}`.
 *
 * - A path that is not valid percent-encoding: 400 `{"error":"Bad Request"}` (a malformed request).
 * - A path parameter over the router's length limit: 404 `{"error":"not_found"}` (no id or email
 *   is that long, so nothing can have it).
 * Both authenticate first, as every other request does: without a valid token the answer is 401.
 * - A request Node's HTTP parser refuses (over-long request line or headers, bad framing): 400
 *   `{"error":"Bad Request"}`, then the connection closes; 408 `{"error":"Request Timeout"}` when
 *   the request (headers, or body) did not arrive in time (app.ts sets the timeouts). Either no
 *   request exists yet to authenticate, or it still waits for its body: the timeout is the answer.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from './clock.js';
import { authenticate } from './services/tokens.js';
import { StoreUnavailableError } from './store/errors.js';
import type { StoreReader } from './store/types.js';

const BAD_REQUEST = { error: 'Bad Request' };
const NOT_FOUND = { error: 'not_found' };
const INTERNAL = { error: 'Internal Server Error' };
const UNAVAILABLE = { error: 'Service Unavailable' };
/** Retry-After of a 503 while the database is away: a restart or failover takes seconds. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Fastify's `frameworkErrors` option: errors of routing, before the request reaches a route. */
export function frameworkErrorHandler(store: StoreReader, clock: Clock) {
  return async (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    let auth: Awaited<ReturnType<typeof authenticate>>;
    try {
      auth = await authenticate(store, clock, request.headers.authorization);
    } catch (failure) {
      // The database is away: the same answer as from any route (see app.ts).
      if (failure instanceof StoreUnavailableError) {
        await reply.code(503).header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS)).send(UNAVAILABLE);
      } else await reply.code(500).send(INTERNAL);
      return;
    }
    if (!auth.ok) {
      // Counted for the failed-authentication limit like every other failure (auth.ts).
      await request.server.refuseAuthentication(request, reply, auth.body);
      return;
    }
    if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') await reply.code(404).send(NOT_FOUND);
    else if (error.code === 'FST_ERR_BAD_URL') await reply.code(400).send(BAD_REQUEST);
    else await reply.code(500).send(INTERNAL);
  };
}

/** Fastify's `clientErrorHandler` option: requests Node's HTTP parser could not read. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const status = timeout ? '408 Request Timeout' : '400 Bad Request';
  const body = JSON.stringify(timeout ? { error: 'Request Timeout' } : BAD_REQUEST);
  // An answer already under way on this connection (its request's body timed out after the
  // route answered, say) must not be followed by a second one: the connection just closes.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !answering) {
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
