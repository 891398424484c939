/**
 * What every test server offers, run as a process (test/helpers/server.ts) or inside the test
 * process (test/helpers/in-process-server.ts): its URL, an admin token, and one call to /v0.
 */

export const TEST_ADMIN_EMAIL = 'admin@example.com';

export interface ApiResponse {
  status: number;
  /** Parsed JSON; the raw text when the body is not JSON; null when there is none. */
  body: any;
  headers: Record<string, string>;
}

export interface ApiCallOptions {
  /** Another token for this call; null sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
}

export interface TestServer {
  /** `http(s)://127.0.0.1:PORT` of the running process (changes on restart). */
  url: string;
  /** A token of the admin `admin@example.com`. */
  token: string;
  /** The database location: a SQLite file path or a `postgres://` URL. */
  dbPath: string;
  dir: string;
  /** SIGTERM, wait for the process to exit, remove the temp folder. */
  stop(): Promise<void>;
  /** SIGTERM, wait for exit, start a new process on the same database file. */
  restart(): Promise<void>;
  /** One request with the admin token; `body` is sent as JSON (a string is sent as is). */
  api(method: string, path: string, body?: unknown, options?: ApiCallOptions): Promise<ApiResponse>;
  /** Everything the current process wrote to stdout so far (its first line is `listening on ...`). */
  stdout(): string;
  /** Everything the current process wrote to stderr so far (its request logs). */
  stderr(): string;
  /** Resolves once the current process's stderr matches (already or later); rejects after the timeout. */
  waitForStderr(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  /** How the last stopped process ended. */
  lastExit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** The running process's pid. */
  pid(): number | undefined;
  /** Resolves when the current process exits by itself (for tests that signal it directly). */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}
/** Text written so far, with waiters for a pattern to appear in it. */
export class Output {
  text = '';
  readonly #waiters = new Set<() => void>();

  append(chunk: string): void {
    this.text += chunk;
    for (const check of this.#waiters) check();
  }

  waitFor(pattern: string | RegExp, timeoutMs = 10_000): Promise<void> {
    const matches = () => (typeof pattern === 'string' ? this.text.includes(pattern) : pattern.test(this.text));
    if (matches()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!matches()) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`stderr did not match ${String(pattern)} within ${timeoutMs} ms; it holds:\n${this.text}`));
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }
}
export async function callApi(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  options: ApiCallOptions = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  const bearer = options.token === undefined ? token : options.token;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  Object.assign(headers, options.headers);
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${url}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, body: parsed, headers: Object.fromEntries(response.headers.entries()) };
}
