/**
 * The typed /v0 client, on Node's http and https (http.ts). Retries with backoff on network errors, 429 (honouring
 * Retry-After) and 5xx; never on other 4xx. Idempotent calls (GET, PATCH, DELETE) are simply
 * sent again. A create whose outcome is unknown (the connection dropped, or a 5xx after the
 * request went out) is not blindly sent again: the client first looks for the object by its
 * natural key, and if it is there, the earlier attempt did create it. So re-running converges
 * without duplicates.
 */
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { normalizeDestination, ruleKey, userKey } from '../model/keys.js';
import {
  ApiError,
  fromServer,
  parseErrorBody,
  type AnswerProblem,
  type DescribeApiError,
  type NetworkProblem,
} from './errors.js';
import { HttpError, sendForText, sendRequest, type HttpRequest } from './http.js';
import { ListBody, type ListBodyEnd } from './list-body.js';
import type { ApiConfiguration } from '../model/configuration.js';
import {
  MalformedResponseError,
  READERS,
  readConfiguration,
  WRAPPER,
  type Resource,
  type ResourceName,
} from './resources.js';
import { isRetryable, parseRetryAfter, retryDelay, type RetryEvent, type RetryPolicy } from './retry.js';

export interface ApiClientOptions {
  /** Base URL of the server: `https://vpn.example.com` (a trailing `/v0` is accepted and dropped). */
  url: string;
  token: string;
  /** Per attempt, including reading the answer. Default 30 s. */
  timeoutMs?: number;
  /**
   * Bound on one call, retries included: no retry starts after it. Default: timeoutMs, so a
   * server that is down fails a call within about one timeout, not minutes.
   */
  totalTimeoutMs?: number;
  /** Retries after the first attempt. Default 4. */
  retries?: number;
  /** First backoff delay; doubles on each retry, with jitter. Default 500 ms. */
  retryBaseMs?: number;
  /** Longest backoff delay. Default 10 s. */
  retryMaxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the call fails. Default 60 s. */
  maxRetryAfterMs?: number;
  /** PEM text of extra certificate authorities (`--ca-file`). */
  ca?: string | Buffer;
  /** Do not verify the server's certificate (`--insecure`). */
  insecure?: boolean;
  /** Words each ApiError's message (the command line's view); default plainDescription. */
  describeError?: DescribeApiError;
  /** Told before each retry's wait (one line for people: src/views/api-error.ts retryLine). */
  onRetry?: (event: RetryEvent) => void;
  /** Told after each HTTP exchange: method, path, status (null: no answer), duration. Never a body or header. */
  onRequest?: (event: RequestEvent) => void;
  /** Once aborted, no new retry starts (an interrupted apply); requests in flight finish. */
  signal?: AbortSignal;
  /** Once aborted, requests in flight are abandoned too (their answer is no longer wanted). */
  cancel?: AbortSignal;
}

export interface RequestEvent {
  method: string;
  path: string;
  status: number | null;
  ms: number;
  /** The network problem of an attempt that got no status. */
  problem?: NetworkProblem;
}

/** Network errors where the request cannot have reached the server: safe to send a create again. */
const NOT_SENT: ReadonlySet<NetworkProblem | undefined> = new Set(['refused', 'host_not_found', 'tls']);
const CONFIGURATION_PATH = '/v0/configuration';
/** What every request says it comes from (a proxy's logs, a firewall's rules). */
const USER_AGENT = 'netform';
/** netform's own server only, outside /v0: the seals of the saved plans applied through it. */
const APPLIED_PLANS_PATH = '/netform/applied-plans';

/**
 * What `claimAppliedPlan` found: recorded now (this apply may write), applied before (on the
 * server's date, when it gave one), or no record kept (a plain /v0 server: 404 or 405).
 */
export type AppliedPlanClaim =
  { status: 'recorded' } | { status: 'already'; appliedAt: string | null } | { status: 'unsupported' };

/** An answer's `data`; `read` when it is a list whose items ListBody has read already. */
interface Answer {
  data: unknown;
  read?: true;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What one HTTP exchange brought back: the status, some headers, and the body (text, or read as a list). */
interface Exchange {
  status: number;
  contentType: string;
  retryAfter: string | undefined;
  text: string;
  listed?: ListBodyEnd<unknown>;
}

/** Thrown by a beforeRetry hook to end the call with a result instead of another attempt. */
class StopRetrying extends Error {}

export interface CreateResult<N extends ResourceName> {
  resource: Resource<N>;
  /** True when an earlier attempt of this create had already made the object (found by key). */
  foundAfterRetry: boolean;
}

export class ApiClient {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #totalTimeoutMs: number;
  readonly #policy: RetryPolicy;
  readonly #options: ApiClientOptions;
  /** What ends a wait between retries: an interrupt or a cancel. */
  readonly #stopSignal: AbortSignal | undefined;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '').replace(/\/v0$/, '');
    this.#token = options.token;
    this.#options = options;
    const stops = [options.signal, options.cancel].filter((x): x is AbortSignal => x !== undefined);
    this.#stopSignal = stops.length > 1 ? AbortSignal.any(stops) : stops[0];
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#totalTimeoutMs = options.totalTimeoutMs ?? this.#timeoutMs;
    this.#policy = {
      retries: options.retries ?? 4,
      baseMs: options.retryBaseMs ?? 500,
      maxDelayMs: options.retryMaxDelayMs ?? 10_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    };
  }

  /** One request's options: the path's URL, this client's TLS settings. */
  #request(method: Method, path: string, rest: Omit<HttpRequest, 'method' | 'url'>): HttpRequest {
    const { ca, insecure } = this.#options;
    return {
      method,
      url: this.baseUrl + path,
      ...rest,
      ...(ca !== undefined ? { ca } : {}),
      ...(insecure ? { insecure } : {}),
    };
  }

  async list<N extends ResourceName>(name: N): Promise<Resource<N>[]> {
    const path = `/v0/${name}`;
    const read = READERS[name];
    const readItem = (item: unknown) => this.#read('GET', path, () => read(item));
    let answer: Answer;
    try {
      // The body is read item by item as it arrives (ListBody): a list may hold 100,000 objects.
      answer = await this.#send('GET', path, undefined, undefined, () => new ListBody(readItem));
    } catch (error) {
      // Every /v0 server has this collection: a 404 means the URL points somewhere else.
      if (error instanceof ApiError && error.status === 404)
        throw this.#notV0('GET', path, 404, { code: 'no_collection', collection: name });
      throw error;
    }
    const data = answer.data;
    if (answer.read) return data as Resource<N>[];
    if (!Array.isArray(data)) throw this.#notV0('GET', path, 200, { code: 'not_a_list', collection: name });
    // In place: each answer object is dropped as soon as it is read.
    for (let i = 0; i < data.length; i++) data[i] = readItem(data[i]);
    return data as Resource<N>[];
  }

  async get<N extends ResourceName>(name: N, id: string): Promise<Resource<N>> {
    const path = `/v0/${name}/${encodeURIComponent(id)}`;
    const { data } = await this.#send('GET', path);
    return this.#read('GET', path, () => READERS[name](data));
  }

  /** Like get, but null when the server answers 404. */
  async find<N extends ResourceName>(name: N, id: string): Promise<Resource<N> | null> {
    try {
      return await this.get(name, id);
    } catch (error) {
      if (error instanceof ApiError && error.isNotFound) return null;
      throw error;
    }
  }

  async create<N extends ResourceName>(name: N, body: Record<string, unknown>): Promise<CreateResult<N>> {
    const path = `/v0/${name}`;
    let found: Resource<N> | null = null;
    const beforeRetry = async (error: ApiError): Promise<void> => {
      if (!outcomeUnknown(error)) return;
      found = await this.#findCreated(name, body);
      // Ends the retries: the object exists, so the earlier attempt created it.
      if (found) throw new StopRetrying();
    };
    try {
      const { data } = await this.#send('POST', path, { [WRAPPER[name]]: body }, beforeRetry);
      return { resource: this.#read('POST', path, () => READERS[name](data)), foundAfterRetry: false };
    } catch (error) {
      if (found) return { resource: found, foundAfterRetry: true };
      throw error;
    }
  }

  async update<N extends ResourceName>(name: N, id: string, body: Record<string, unknown>): Promise<Resource<N>> {
    const path = `/v0/${name}/${encodeURIComponent(id)}`;
    const { data } = await this.#send('PATCH', path, { [WRAPPER[name]]: body });
    return this.#read('PATCH', path, () => READERS[name](data));
  }

  /**
   * Deletes one object. A 404 after a retry means an earlier attempt did delete it; a 404 on
   * the first attempt is reported to the caller (it decides whether "already gone" is fine).
   */
  async remove(name: ResourceName, id: string): Promise<void> {
    const path = `/v0/${name}/${encodeURIComponent(id)}`;
    let retried = false;
    try {
      await this.#send('DELETE', path, undefined, async () => {
        retried = true;
      });
    } catch (error) {
      if (retried && error instanceof ApiError && error.isNotFound) return;
      throw error;
    }
  }

  /** `GET /v0/configuration` (the singleton of upstream 0.7.36). A server without it answers 404 (ApiError.isNotFound). */
  async getConfiguration(): Promise<ApiConfiguration> {
    const { data } = await this.#send('GET', CONFIGURATION_PATH);
    return this.#read('GET', CONFIGURATION_PATH, () => readConfiguration(data));
  }

  /**
   * Whether the server is netform's bundled one: its public `GET /v0/openapi.json` (no token sent)
   * is netform's document. A Firezone 0.7 server has no such route. One attempt, no retry; any
   * failure or other answer is false.
   */
  async isNetformServer(): Promise<boolean> {
    try {
      const response = await sendForText(
        this.#request('GET', '/v0/openapi.json', {
          headers: { accept: 'application/json', 'user-agent': USER_AGENT },
          timeoutMs: this.#timeoutMs,
        }),
      );
      if (response.statusCode !== 200) return false;
      const doc = JSON.parse(response.text) as { info?: { title?: unknown } } | null;
      return typeof doc?.info?.title === 'string' && doc.info.title.startsWith('netform ');
    } catch {
      return false;
    }
  }

  /**
   * `POST /netform/applied-plans {seal, claim}` on netform's own server: records a saved plan as
   * applied. `claim` is this apply's own random id, so that a retry of a request whose answer was
   * lost is recognised (200) rather than refused as a second apply (409).
   */
  async claimAppliedPlan(seal: string, claim: string): Promise<AppliedPlanClaim> {
    try {
      await this.#send('POST', APPLIED_PLANS_PATH, { seal, claim });
      return { status: 'recorded' };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 409) return { status: 'already', appliedAt: error.errors.applied_at?.[0] ?? null };
      if (error.isNotFound || error.status === 405) return { status: 'unsupported' };
      throw error;
    }
  }

  /** `PATCH /v0/configuration`: only the keys of `body` change. */
  async updateConfiguration(body: Record<string, unknown>): Promise<ApiConfiguration> {
    const { data } = await this.#send('PATCH', CONFIGURATION_PATH, { configuration: body });
    return this.#read('PATCH', CONFIGURATION_PATH, () => readConfiguration(data));
  }

  /** The live object a create of `body` would make, found by its natural key; null when there is none. */
  findByKey<N extends ResourceName>(name: N, body: Record<string, unknown>): Promise<Resource<N> | null> {
    return this.#findCreated(name, body);
  }

  /** Looks for the object a create of `body` would have made, by its natural key. */
  async #findCreated<N extends ResourceName>(name: N, body: Record<string, unknown>): Promise<Resource<N> | null> {
    if (name === 'users') {
      if (typeof body.email !== 'string') return null;
      const user = await this.find('users', body.email.trim());
      return user && userKey(user.email) === userKey(body.email) ? (user as Resource<N>) : null;
    }
    if (name === 'devices') {
      // Without a name the server invents one: nothing identifies the device, so it is not looked for.
      if (typeof body.name !== 'string' || typeof body.user_id !== 'string') return null;
      const wanted = body.name.trim();
      const devices = await this.list('devices');
      return (devices.find((d) => d.user_id === body.user_id && d.name.trim() === wanted) as Resource<N>) ?? null;
    }
    if (typeof body.destination !== 'string') return null;
    const owner = typeof body.user_id === 'string' ? body.user_id : null;
    const keyOf = (r: {
      user_id: string | null;
      action: string;
      destination: string;
      port_type: string | null;
      port_range: string | null;
    }) =>
      ruleKey({
        ownerEmail: r.user_id,
        action: r.action,
        destination: normalizeDestination(r.destination),
        port_type: r.port_type,
        port_range: r.port_range,
      });
    const wanted = keyOf({
      user_id: owner,
      action: typeof body.action === 'string' ? body.action : 'drop',
      destination: body.destination,
      port_type: typeof body.port_type === 'string' ? body.port_type : null,
      port_range: typeof body.port_range === 'string' ? body.port_range : null,
    });
    const rules = await this.list('rules');
    return (rules.find((r) => keyOf(r) === wanted) as Resource<N>) ?? null;
  }

  /**
   * One call: attempts until an answer, a failure not worth retrying, the retry limit, or the
   * call's deadline (totalTimeoutMs), whichever comes first. Each retry is announced (onRetry).
   */
  async #send(
    method: Method,
    path: string,
    json?: unknown,
    beforeRetry?: (error: ApiError) => Promise<void>,
    listBody?: () => ListBody<unknown>,
  ): Promise<Answer> {
    const deadline = Date.now() + this.#totalTimeoutMs;
    for (let retry = 1; ; retry++) {
      // The first attempt gets the whole --timeout (the deadline was set a moment ago, not for it
      // to lose a millisecond to the clock); a retry gets what is left of the call's deadline.
      const attemptTimeout =
        retry === 1
          ? Math.min(this.#timeoutMs, this.#totalTimeoutMs)
          : Math.max(1, Math.min(this.#timeoutMs, deadline - Date.now()));
      const outcome = await this.#attempt(method, path, json, attemptTimeout, listBody?.());
      if (!(outcome instanceof ApiError)) return outcome;
      const error = outcome;
      if (!isRetryable(error) || this.#options.signal?.aborted || this.#options.cancel?.aborted) throw error;
      const delay = retryDelay(retry, this.#policy, error.retryAfterMs ?? null, Math.random());
      // A retry that could not start before the deadline is not announced or waited for.
      if (delay === null || Date.now() + delay >= deadline) throw error;
      this.#options.onRetry?.({ method, path, delayMs: delay, retry, retries: this.#policy.retries, error });
      try {
        await sleep(delay, undefined, this.#stopSignal ? { signal: this.#stopSignal } : undefined);
      } catch {
        throw error;
      }
      if (beforeRetry) {
        try {
          await beforeRetry(error);
        } catch (stop) {
          if (stop instanceof StopRetrying) throw error;
          throw stop;
        }
      }
    }
  }

  /**
   * One HTTP exchange: the answer's `data`, or the ApiError describing why there is none. With
   * `list`, a successful answer's body goes to it as it arrives, and the items it read are the
   * answer (`read`), unless the body was not a compact list (then it is read whole, as usual).
   */
  async #attempt(
    method: Method,
    path: string,
    json: unknown,
    timeoutMs: number,
    list?: ListBody<unknown>,
  ): Promise<Answer | ApiError> {
    const started = Date.now();
    let exchange: Exchange;
    // The exchange gets a signal of its own, which follows the cancel signal only until the
    // exchange ends: nothing aborts a finished request.
    const link = linkedAbort(this.#options.cancel);
    try {
      const options = this.#request(method, path, {
        headers: { authorization: `Bearer ${this.#token}`, accept: 'application/json', 'user-agent': USER_AGENT },
        timeoutMs,
        ...(link ? { signal: link.signal } : {}),
        ...(json !== undefined ? { json } : {}),
      });
      exchange = list
        ? await this.#streamed(options, list)
        : await sendForText(options).then((response) => ({
            status: response.statusCode,
            text: response.text,
            contentType: String(response.headers['content-type'] ?? ''),
            retryAfter: headerValue(response.headers['retry-after']),
          }));
    } catch (error) {
      // An item of the list the server sent could not be read.
      if (error instanceof ApiError) return error;
      const failure = this.#networkError(method, path, error, timeoutMs);
      this.#options.onRequest?.({ method, path, status: null, ms: Date.now() - started, problem: failure.problem });
      return failure;
    } finally {
      link?.unlink();
    }
    const { status, contentType, retryAfter } = exchange;
    this.#options.onRequest?.({ method, path, status, ms: Date.now() - started });
    let text = exchange.text;
    if (exchange.listed) {
      const end = exchange.listed;
      if ('items' in end) return { data: end.items, read: true };
      if ('data' in end) return { data: end.data };
      if ('invalid' in end) return this.#notV0(method, path, status, { code: 'invalid_json' });
      text = end.whole;
    }
    const isJson = looksLikeJson(text);
    if (status >= 200 && status < 300) {
      if (status === 204 || text === '') return { data: null };
      if (!isJson) return this.#notV0(method, path, status, nonJson(contentType, text));
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return this.#notV0(method, path, status, { code: 'invalid_json' });
      }
      if (typeof parsed !== 'object' || parsed === null || !('data' in parsed))
        return this.#notV0(method, path, status, { code: 'no_data' });
      return { data: (parsed as { data: unknown }).data };
    }
    if (status >= 300 && status < 400) {
      return this.#notV0(method, path, status, { code: 'redirect' });
    }
    // A server (or a proxy) may echo the request back: the token goes no further than this.
    const { errors, reason } = fromServer(parseErrorBody(text), this.#token);
    const answer = reason || isJson || text === '' ? undefined : nonJson(contentType, text);
    return this.#error(method, path, status, errors, reason, {
      server: this.baseUrl,
      retryAfterMs: parseRetryAfter(retryAfter, Date.now()),
      ...(answer ? { answer } : {}),
    });
  }

  /**
   * A GET whose body, when the answer is a success, goes to `list` piece by piece; any other
   * answer's body is kept as text. What `list` throws (an item that cannot be read) ends the
   * exchange: the stream is destroyed when the loop is left.
   */
  async #streamed(options: HttpRequest, list: ListBody<unknown>): Promise<Exchange> {
    const response = await sendRequest(options);
    const head = {
      status: response.statusCode,
      contentType: String(response.headers['content-type'] ?? ''),
      retryAfter: headerValue(response.headers['retry-after']),
    };
    const decoder = new StringDecoder('utf8');
    const pieces: string[] = [];
    let success: boolean | undefined;
    const take = (piece: string) => {
      success ??= head.status >= 200 && head.status < 300 && head.status !== 204;
      if (success) list.push(piece);
      else pieces.push(piece);
    };
    for await (const chunk of response.body) take(decoder.write(chunk));
    take(decoder.end());
    return success ? { ...head, text: '', listed: list.end() } : { ...head, text: pieces.join('') };
  }

  /** Turns a failed exchange into an ApiError (by its code: Node's, or ETIMEDOUT for the bound). */
  #networkError(method: string, path: string, error: unknown, timeoutMs: number): ApiError {
    const code = error instanceof HttpError ? error.code : error instanceof Error ? error.message : String(error);
    return this.#error(method, path, null, {}, code, {
      server: this.baseUrl,
      problem: classifyNetworkError(code),
      timeoutMs,
    });
  }

  #notV0(method: string, path: string, status: number, answer: AnswerProblem): ApiError {
    return this.#error(method, path, status, {}, '', { server: this.baseUrl, problem: 'not_v0', answer });
  }

  #read<T>(method: string, path: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof MalformedResponseError) throw this.#malformed(method, path, error.answer);
      throw error;
    }
  }

  #malformed(method: string, path: string, answer: AnswerProblem): ApiError {
    return this.#error(method, path, 200, {}, '', { server: this.baseUrl, answer });
  }

  #error(...[method, path, status, errors, reason, details]: ConstructorParameters<typeof ApiError>): ApiError {
    return new ApiError(method, path, status, errors, reason, details, this.#options.describeError);
  }
}

/** A header's one value (Node gives a list for a repeated one). */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * An AbortController that aborts when `parent` does, until unlink(): what a request is given
 * instead of a long-lived signal, so that nothing aborts it once its exchange is over.
 */
function linkedAbort(parent: AbortSignal | undefined): { signal: AbortSignal; unlink: () => void } | undefined {
  if (!parent) return undefined;
  const own = new AbortController();
  if (parent.aborted) {
    own.abort(parent.reason);
    return { signal: own.signal, unlink: () => {} };
  }
  const follow = () => own.abort(parent.reason);
  parent.addEventListener('abort', follow, { once: true });
  return { signal: own.signal, unlink: () => parent.removeEventListener('abort', follow) };
}

/** Whether a failed create may have been applied anyway (so it is looked for before sending it again). */
function outcomeUnknown(error: ApiError): boolean {
  if (error.status !== null) return error.status >= 500;
  return !NOT_SENT.has(error.problem);
}

const TLS_CODE = /CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

export function classifyNetworkError(code: string): NetworkProblem {
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'host_not_found';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return 'timeout';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE')
    return 'reset';
  if (TLS_CODE.test(code)) return 'tls';
  return 'other';
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

function nonJson(contentType: string, text: string): AnswerProblem {
  if (/html/i.test(contentType) || /^\s*</.test(text)) return { code: 'html' };
  return { code: 'content_type', type: contentType ? contentType.split(';')[0]! : null };
}
