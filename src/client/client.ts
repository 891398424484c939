/**
 * The typed /v0 client on got. Retries with backoff on network errors, 429 (honouring
 * Retry-After) and 5xx; never on other 4xx. Idempotent calls (GET, PATCH, DELETE) are simply
 * sent again. A create whose outcome is unknown (the connection dropped, or a 5xx after the
 * request went out) is not blindly sent again: the client first looks for the object by its
 * natural key, and if it is there, the earlier attempt did create it. So re-running converges
 * without duplicates.
 */
import got, { HTTPError, RequestError, type Got, type Method } from 'got';
import { normalizeDestination, ruleKey, userKey } from '../model/keys.js';
import { ApiError, parseErrorBody } from './errors.js';
import type { ApiConfiguration } from '../model/configuration.js';
import { MalformedResponseError, READERS, readConfiguration, WRAPPER, type Resource, type ResourceName } from './resources.js';

export interface ApiClientOptions {
  /** Base URL of the server, without `/v0`: `https://vpn.example.com`. */
  url: string;
  token: string;
  /** Per request, including reading the answer. Default 30 s. */
  timeoutMs?: number;
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
}

/** Network errors where the request cannot have reached the server: safe to send a create again. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EADDRINUSE']);
const CONFIGURATION_PATH = '/v0/configuration';
const RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504, 521, 522, 524];
const RETRY_ERROR_CODES = ['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN'];

export interface CreateResult<N extends ResourceName> {
  resource: Resource<N>;
  /** True when an earlier attempt of this create had already made the object (found by key). */
  foundAfterRetry: boolean;
}

export class ApiClient {
  readonly baseUrl: string;
  readonly #http: Got;
  readonly #token: string;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.#token = options.token;
    const base = options.retryBaseMs ?? 500;
    const maxDelay = options.retryMaxDelayMs ?? 10_000;
    this.#http = got.extend({
      timeout: { request: options.timeoutMs ?? 30_000 },
      responseType: 'text',
      throwHttpErrors: true,
      followRedirect: false,
      https: {
        ...(options.ca !== undefined ? { certificateAuthority: options.ca } : {}),
        ...(options.insecure ? { rejectUnauthorized: false } : {}),
      },
      retry: {
        limit: options.retries ?? 4,
        methods: ['GET', 'PUT', 'PATCH', 'DELETE', 'POST', 'HEAD'],
        statusCodes: RETRY_STATUS_CODES,
        errorCodes: RETRY_ERROR_CODES,
        maxRetryAfter: options.maxRetryAfterMs ?? 60_000,
        calculateDelay: ({ attemptCount, computedValue, retryAfter, error }) => {
          if (computedValue === 0) return 0;
          // got has already checked Retry-After against maxRetryAfter: honour it as given.
          if (retryAfter !== undefined && error.response) return computedValue;
          const backoff = Math.min(base * 2 ** (attemptCount - 1), maxDelay);
          return backoff / 2 + Math.random() * (backoff / 2);
        },
      },
    });
  }

  async list<N extends ResourceName>(name: N): Promise<Resource<N>[]> {
    const path = `/v0/${name}`;
    const data = await this.#send('GET', path);
    if (!Array.isArray(data)) throw this.#malformed('GET', path, `a list of ${name} was expected`);
    const read = READERS[name];
    return data.map((item) => this.#read('GET', path, () => read(item)));
  }

  async get<N extends ResourceName>(name: N, id: string): Promise<Resource<N>> {
    const path = `/v0/${name}/${encodeURIComponent(id)}`;
    const data = await this.#send('GET', path);
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
    const beforeRetry = async (error: RequestError): Promise<void> => {
      if (!outcomeUnknown(error)) return;
      found = await this.#findCreated(name, body);
      // Stops got's retry: the object exists, so the earlier attempt created it.
      if (found) throw new Error('created by an earlier attempt');
    };
    try {
      const data = await this.#send('POST', path, { [WRAPPER[name]]: body }, beforeRetry);
      return { resource: this.#read('POST', path, () => READERS[name](data)), foundAfterRetry: false };
    } catch (error) {
      if (found) return { resource: found, foundAfterRetry: true };
      throw error;
    }
  }

  async update<N extends ResourceName>(name: N, id: string, body: Record<string, unknown>): Promise<Resource<N>> {
    const path = `/v0/${name}/${encodeURIComponent(id)}`;
    const data = await this.#send('PATCH', path, { [WRAPPER[name]]: body });
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
    const data = await this.#send('GET', CONFIGURATION_PATH);
    return this.#read('GET', CONFIGURATION_PATH, () => readConfiguration(data));
  }

  /** `PATCH /v0/configuration`: only the keys of `body` change. */
  async updateConfiguration(body: Record<string, unknown>): Promise<ApiConfiguration> {
    const data = await this.#send('PATCH', CONFIGURATION_PATH, { configuration: body });
    return this.#read('PATCH', CONFIGURATION_PATH, () => readConfiguration(data));
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
    const keyOf = (r: { user_id: string | null; action: string; destination: string; port_type: string | null; port_range: string | null }) =>
      ruleKey({ ownerEmail: r.user_id, action: r.action, destination: normalizeDestination(r.destination), port_type: r.port_type, port_range: r.port_range });
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

  async #send(method: Method, path: string, json?: unknown, beforeRetry?: (error: RequestError) => Promise<void>): Promise<unknown> {
    let text: string;
    try {
      const response = await this.#http(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.#token}`, accept: 'application/json' },
        ...(json !== undefined ? { json } : {}),
        ...(beforeRetry ? { hooks: { beforeRetry: [beforeRetry] } } : {}),
      });
      if (response.statusCode === 204) return null;
      text = response.body;
    } catch (error) {
      throw toApiError(method, path, error);
    }
    if (text === '') return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw this.#malformed(method, path, 'the answer is not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || !('data' in parsed)) throw this.#malformed(method, path, 'the answer has no `data`');
    return (parsed as { data: unknown }).data;
  }

  #read<T>(method: string, path: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof MalformedResponseError) throw this.#malformed(method, path, error.message);
      throw error;
    }
  }

  #malformed(method: string, path: string, why: string): ApiError {
    return new ApiError(method, path, 200, {}, `unexpected answer: ${why}`);
  }
}

function outcomeUnknown(error: RequestError): boolean {
  if (error instanceof HTTPError) return error.response.statusCode >= 500;
  return !NOT_SENT_CODES.has(error.code);
}

/** Turns got's error into an ApiError without keeping got's error (its options hold the token). */
function toApiError(method: string, path: string, error: unknown): Error {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPError) {
    const { errors, reason } = parseErrorBody(typeof error.response.body === 'string' ? error.response.body : '');
    return new ApiError(method, path, error.response.statusCode, errors, reason || error.response.statusMessage || '');
  }
  if (error instanceof RequestError) {
    const code = error.code && error.code !== 'ERR_GOT_REQUEST_ERROR' ? error.code : error.message;
    return new ApiError(method, path, null, {}, code);
  }
  return new ApiError(method, path, null, {}, error instanceof Error ? error.message : String(error));
}
