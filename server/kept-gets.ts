/**
 * GET of a device or a rule by id, answered before Fastify's lifecycle when everything the answer
 * needs is kept by the SQLite reader: the token with its owner, the row, the settings, and the
 * answer's bytes (serialized once by the route itself, routes/answer.ts). The reader keeps them
 * until anything commits, checked by the one `PRAGMA data_version` of the request (the store's
 * synchronous lookups, store/types.ts SyncReads), so a revoked token or a changed row is seen by
 * the very next request, as on the route.
 *
 * Only the success is answered here, with the route's own bytes and headers (`Content-Type`,
 * `Content-Length`; Node adds the rest, as for every answer), counted and timed in the request
 * metrics under the route's pattern. Everything else goes to Fastify unchanged: another method or
 * path, a query string, a missing Host, a declared body, a refused or unkept token, an unknown
 * or unkept row, bytes not made yet (the route then makes them), a server closing, a store error
 * (the route meets it again and answers it), and every request while access lines are written
 * (at info and below: the access log is Fastify's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isUuid } from '../src/model/index.js';
import type { Clock } from './clock.js';
import type { RequestRecorder } from './operations.js';
import { JSON_TYPE, keptAnswer } from './routes/answer.js';
import { settingsOf } from './services/settings.js';
import { bearerTokenHash, keptAuthentication } from './services/tokens.js';
import { shownDevice, shownRule } from './services/views.js';
import type { SyncReads } from './store/index.js';

const DEVICES = '/v0/devices/';
const RULES = '/v0/rules/';
/** The route patterns the answers are counted under (those of routes/devices.ts and routes/rules.ts). */
export const DEVICE_ROUTE = '/v0/devices/:id';
export const RULE_ROUTE = '/v0/rules/:id';
const UUID_LENGTH = 36;

export interface KeptGetOptions {
  reads: SyncReads;
  clock: Clock;
  /** Counts and times an answer (the request metrics), when they are recorded. */
  record?: RequestRecorder;
  /** Whether the server is closing (its answers then say `Connection: close`: Fastify's). */
  closing: () => boolean;
}

/** A request handler that answers a kept GET and returns true, or returns false and touches nothing. */
export function keptGets({ reads, clock, record, closing }: KeptGetOptions) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET') return false;
    const start = performance.now();
    const url = req.url ?? '';
    let route: string;
    if (url.length === DEVICES.length + UUID_LENGTH && url.startsWith(DEVICES)) route = DEVICE_ROUTE;
    else if (url.length === RULES.length + UUID_LENGTH && url.startsWith(RULES)) route = RULE_ROUTE;
    else return false;
    const id = url.slice(url.length - UUID_LENGTH);
    const headers = req.headers;
    if (
      !isUuid(id) ||
      headers.host === undefined ||
      headers['content-length'] !== undefined ||
      headers['transfer-encoding'] !== undefined ||
      closing()
    )
      return false;
    let body: string | undefined;
    try {
      const hash = bearerTokenHash(headers.authorization);
      if (typeof hash !== 'string') return false;
      const found = reads.findTokenByHash(hash);
      if (found === null || !Object.isFrozen(found) || !keptAuthentication(found, clock, hash).ok) return false;
      const view = route === DEVICE_ROUTE ? keptDevice(reads, id.toLowerCase()) : keptRule(reads, id.toLowerCase());
      body = view === undefined ? undefined : keptAnswer(view);
    } catch {
      // A store error: the route meets it again, and answers and counts it.
      return false;
    }
    if (body === undefined) return false;
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': `${Buffer.byteLength(body)}` });
    res.end(body);
    record?.(route, 'GET', 200, (performance.now() - start) / 1000);
    return true;
  };
}

/** The view of a kept device row (frozen), as the route shows it; undefined when none is kept. */
function keptDevice(reads: SyncReads, id: string): object | undefined {
  const row = reads.getDevice(id);
  if (row === null || !Object.isFrozen(row)) return undefined;
  return shownDevice(row, settingsOf(reads.getSettings()));
}

function keptRule(reads: SyncReads, id: string): object | undefined {
  const row = reads.getRule(id);
  if (row === null || !Object.isFrozen(row)) return undefined;
  return shownRule(row);
}
