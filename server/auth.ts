/**
 * Bearer-token authentication for every request, before routing: a request without a valid
 * token gets 401 whether or not the resource (or the route) exists. Routes marked
 * `config: { public: true }` (health, readiness, metrics, the API description) need none.
 *
 * Failed authentications are rate limited per client address, IPv6 per /64 (@fastify/rate-limit's counter):
 * past `max` failures within the window, a failing request gets 429 with Retry-After instead of
 * 401. Only failures count, and a request with a valid token is never held back: tokens are 256
 * random bits, so the limit is there against floods of bad tokens, not to make guessing slower.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { UserRow } from './store/index.js';
import type { ServiceContext } from './services/context.js';
import { authenticate } from './services/tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin whose token authenticated the request. */
    actor: UserRow | null;
    /** The digest of that token, checked again inside each write transaction (services/context.ts). */
    tokenHash: string | null;
  }
  interface FastifyInstance {
    /**
     * Answers a failed authentication: 401 with `body`, or 429 once the client is over the
     * failure limit. For failures answered outside the auth hook (framework-errors.ts).
     */
    refuseAuthentication(
      request: FastifyRequest,
      reply: FastifyReply,
      body: Record<string, unknown>,
    ): Promise<FastifyReply>;
  }
}

export interface AuthFailureLimit {
  /** Failed authentications allowed per client address within the window; 0 turns the limit off. */
  max: number;
  /** The window, in milliseconds. */
  windowMs: number;
  /** Client addresses or CIDR blocks never limited (by default loopback, where a local proxy would put everyone). */
  exempt: string[];
}

export const DEFAULT_AUTH_FAILURE_LIMIT: AuthFailureLimit = {
  max: 20,
  windowMs: 60_000,
  exempt: ['127.0.0.0/8', '::1/128'],
};

export interface AuthOptions {
  ctx: ServiceContext;
  failureLimit?: AuthFailureLimit;
  /**
   * Runs first on every request, public routes included: true when it answered the request
   * itself (the app's Host check), which then goes no further.
   */
  refuseRequest?: (request: FastifyRequest, reply: FastifyReply) => boolean;
}

const TOO_MANY = { error: 'Too Many Requests' };

/** A matcher of client addresses against addresses and CIDR blocks (IPv4-mapped IPv6 seen as IPv4). */
export function addressMatcher(entries: string[]): (address: string) => boolean {
  const blocks = entries.map((entry) => {
    const text = entry.trim();
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.parse(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
  });
  return (address: string) => {
    if (!ipaddr.isValid(address)) return false;
    const parsed = ipaddr.process(address);
    return blocks.some(([block, bits]) => block.kind() === parsed.kind() && parsed.match(block as never, bits));
  };
}

/**
 * The key a client's failures are counted under: its IPv4 address, or the /64 of its IPv6
 * address (one host usually holds a whole /64, and could otherwise change address at will).
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

type Limiter = (
  request: FastifyRequest,
) => Promise<{ isAllowed: boolean; isExceeded?: boolean; ttlInSeconds?: number }>;

const bearerAuth: FastifyPluginAsync<AuthOptions> = async (
  app: FastifyInstance,
  { ctx, failureLimit, refuseRequest },
) => {
  app.decorateRequest('actor', null);
  app.decorateRequest('tokenHash', null);
  let limiter: Limiter | null = null;
  if (failureLimit && failureLimit.max > 0) {
    await app.register(rateLimit, { global: false });
    const exempt = addressMatcher(failureLimit.exempt);
    limiter = (app as unknown as { createRateLimit(options: object): Limiter }).createRateLimit({
      max: failureLimit.max,
      timeWindow: failureLimit.windowMs,
      keyGenerator: (request: FastifyRequest) => clientKey(request.ip),
      allowList: (request: FastifyRequest) => exempt(request.ip),
    });
  }
  const refuse = async (
    request: FastifyRequest,
    reply: FastifyReply,
    body: Record<string, unknown>,
  ): Promise<FastifyReply> => {
    if (limiter) {
      const verdict = await limiter(request);
      if (!verdict.isAllowed && verdict.isExceeded) {
        request.log.warn({ remoteAddress: request.ip }, 'too many failed authentications from this address');
        return reply
          .code(429)
          .header('retry-after', String(verdict.ttlInSeconds ?? 1))
          .send(TOO_MANY);
      }
    }
    return reply.code(401).send(body);
  };
  app.decorate('refuseAuthentication', refuse);
  // Callback style, not async: it runs on every request, and a promise each is measurable.
  app.addHook('onRequest', (request, reply, done) => {
    if (refuseRequest?.(request, reply)) return;
    if (request.routeOptions.config?.public) return done();
    authenticate(ctx.store, ctx.clock, request.headers.authorization).then((result) => {
      if (result.ok) {
        request.actor = result.actor;
        request.tokenHash = result.tokenHash;
        return done();
      }
      return refuse(request, reply, result.body).then(() => undefined, done);
    }, done);
  });
};

// Applies to the whole app rather than an encapsulated child (what fastify-plugin does).
(bearerAuth as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export { bearerAuth };
