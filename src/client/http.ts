/**
 * One HTTP exchange on Node's own http and https modules: what the client (client.ts) needs and
 * no more. A method, headers and an optional JSON body; no redirect followed, no retry (the client
 * retries), no decompression (no Accept-Encoding is sent); a bound on the whole exchange, the
 * answer's body included (`timeoutMs`); an abort signal; extra certificate authorities or none
 * verified. Node's global agents keep connections alive between requests, and their idle sockets
 * keep no process alive.
 *
 * An HTTP library (got) did this before and cost every command that talks to a server some sixty
 * modules to load, about a sixth of a plan's CPU; these are in Node already. Its errors are
 * Node's: the network's codes (ECONNREFUSED, ENOTFOUND, ECONNRESET, the TLS ones), ETIMEDOUT for
 * the bound, ERR_ABORTED for the signal. They never carry the request's headers (the token).
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON (Content-Type: application/json). */
  json?: unknown;
  /** The whole exchange, from the request until the answer's last byte. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** PEM text of extra certificate authorities. */
  ca?: string | Buffer;
  /** Do not verify the server's certificate. */
  insecure?: boolean;
}

interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The answer's body as it arrives; failures of the exchange (the bound, a drop, the signal) end it with their error. */
  body: AsyncIterable<Buffer>;
}

/**
 * A failure of the exchange, with Node's code (or ETIMEDOUT, ERR_ABORTED). The ones made here have
 * their code as their message (never the URL): the client words a failure by its code (src/views).
 */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Starts an exchange: resolves with the answer's status and headers once they arrive; read `body` to the end. */
export function sendRequest(options: HttpRequest): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      reject(new HttpError('ERR_INVALID_URL', 'ERR_INVALID_URL'));
      return;
    }
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      reject(new HttpError('ERR_UNSUPPORTED_PROTOCOL', 'ERR_UNSUPPORTED_PROTOCOL'));
      return;
    }
    const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
    const headers: Record<string, string | number> = { ...options.headers };
    if (body) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = body.length;
    }
    const send = secure ? httpsRequest : httpRequest;
    const request = send(url, {
      method: options.method,
      headers,
      ...(secure && options.ca !== undefined ? { ca: options.ca } : {}),
      ...(secure && options.insecure ? { rejectUnauthorized: false } : {}),
    });
    let response: IncomingMessage | undefined;
    let settled = false;
    const fail = (error: HttpError) => {
      // Once the answer has begun, its reader hears the failure through the body.
      if (response) response.destroy(error);
      request.destroy(error);
    };
    const timer = setTimeout(() => fail(new HttpError('ETIMEDOUT', 'ETIMEDOUT')), options.timeoutMs);
    const onAbort = () => fail(new HttpError('ERR_ABORTED', 'ERR_ABORTED'));
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (response) return;
      done();
      if (!settled) {
        settled = true;
        reject(asHttpError(error));
      }
    });
    request.on('response', (answer) => {
      response = answer;
      settled = true;
      answer.once('close', done);
      resolve({ statusCode: answer.statusCode ?? 0, headers: answer.headers, body: bodyOf(answer) });
    });
    request.end(body);
  });
}

/** An exchange read whole: the status, the headers and the body as text. */
export async function sendForText(
  options: HttpRequest,
): Promise<{ statusCode: number; headers: IncomingHttpHeaders; text: string }> {
  const { statusCode, headers, body } = await sendRequest(options);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return { statusCode, headers, text: Buffer.concat(chunks).toString('utf8') };
}

/** The answer's chunks; an error that ends it is an HttpError with its code. */
async function* bodyOf(answer: IncomingMessage): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of answer) yield chunk as Buffer;
  } catch (error) {
    throw asHttpError(error as NodeJS.ErrnoException);
  } finally {
    // Left early (the reader stopped): the rest of the answer is not wanted.
    if (!answer.complete) answer.destroy();
  }
}

function asHttpError(error: NodeJS.ErrnoException): HttpError {
  if (error instanceof HttpError) return error;
  return new HttpError(error.message, typeof error.code === 'string' && error.code ? error.code : error.message);
}
