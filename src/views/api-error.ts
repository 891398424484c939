/**
 * The /v0 client's failures in words: an ApiError's message as the command line shows it (naming
 * the flags that fix it), and the one line about each retry. The client carries codes and values
 * (src/client/errors.ts); the command line hands `apiErrorText` to it.
 */
import type { AnswerProblem, ApiErrorFacts, NetworkProblem } from '../client/errors.js';
import type { RetryEvent } from '../client/retry.js';

/** OpenSSL's words for a TLS handshake answered by a plain-HTTP server. */
const PLAIN_HTTP = /^EPROTO$|wrong version number|packet length too long|http request/i;

/** An ApiError's message: what failed, and what to do about it. */
export function apiErrorText(facts: ApiErrorFacts): string {
  const { method, path, status, errors, server: url, problem, timeoutMs } = facts;
  const reason = reasonText(facts);
  const where = `${method} ${path}`;
  const server = url ?? 'the server';
  switch (problem) {
    case 'refused':
      return `${where}: connection refused by ${server}: nothing is listening there. Is the server running, and is --url (NETFORM_URL) right?`;
    case 'host_not_found':
      return `${where}: host not found: ${hostOf(server)} does not resolve (${reason}). Check the host name in --url (NETFORM_URL)`;
    case 'tls':
      if (PLAIN_HTTP.test(reason))
        return `${where}: the server speaks plain HTTP: use http:// in --url (NETFORM_URL) (${reason}: the answer to the TLS handshake was not TLS)`;
      return `${where}: TLS failure talking to ${server} (${reason}). If the server uses a private or self-signed certificate, pass --ca-file CA.pem; --insecure skips verification`;
    case 'timeout':
      return `${where}: no answer from ${server} within ${timeoutMs !== undefined ? seconds(timeoutMs) : 'the timeout'}. The server or a proxy in front of it is not answering; --timeout SECONDS waits longer`;
    case 'reset':
      return `${where}: ${server} dropped the connection (${reason})`;
    case 'not_v0':
      return `${where}: ${server} answered${status !== null ? ` ${status}` : ''}, but this does not look like a /v0 API (${reason}). --url must be the server's base URL, such as https://vpn.example.com`;
    case 'other':
      return `${where}: no answer from ${server} (${reason})`;
    default:
      break;
  }
  if (status === null) return `${where}: no answer from ${server} (${reason})`;
  const fields = Object.entries(errors).flatMap(([field, messages]) =>
    messages.map((m) => (field === 'base' || m.startsWith(`${field} `) ? m : `${field} ${m}`)),
  );
  if (status === 401)
    return `${where}: 401 the token is unknown, revoked or expired (or its owner is no longer an admin) (${fields.join('; ') || reason}); check --token / NETFORM_TOKEN`;
  const detail = fields.length > 0 ? fields.join('; ') : reason;
  return `${where}: ${status}${detail ? ` ${detail}` : ''}`;
}

/** The reason in words: the server's, or what the client found wrong with the answer. */
function reasonText(facts: Pick<ApiErrorFacts, 'answer' | 'reason'>): string {
  return facts.answer ? answerText(facts.answer) : facts.reason;
}

function answerText(answer: AnswerProblem): string {
  switch (answer.code) {
    case 'no_collection':
      return `it has no /v0/${answer.collection}`;
    case 'not_a_list':
      return `a list of ${answer.collection} was expected`;
    case 'invalid_json':
      return 'the answer is not valid JSON';
    case 'no_data':
      return 'the answer has no `data`';
    case 'redirect':
      return 'it redirects elsewhere; give the URL it redirects to';
    case 'html':
      return 'the answer is an HTML page, not JSON';
    case 'content_type':
      return `the answer is ${answer.type ?? 'not JSON'}`;
    case 'missing_field':
      return `unexpected answer: the server sent a ${answer.object} without \`${answer.field}\``;
    case 'not_an_object':
      return `unexpected answer: the server sent a ${answer.object} that is not an object`;
    case 'no_configuration':
      return (
        'this server has no /v0/configuration, so the `configuration:` of the desired state cannot be planned ' +
        'against it; remove `configuration:` to manage users, devices and rules only'
      );
  }
}

/** A duration to a tenth of a second, without a trailing `.0`: 999 ms is "1 s", 250 ms "0.3 s". */
function seconds(ms: number): string {
  if (ms < 50) return `${Math.max(0, Math.round(ms))} ms`;
  return `${Math.round(ms / 100) / 10} s`;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** A short phrase for a network problem, as retry lines show it (`connection refused`). */
export function problemPhrase(problem: NetworkProblem, reason: string): string {
  switch (problem) {
    case 'refused':
      return 'connection refused';
    case 'host_not_found':
      return 'host not found';
    case 'tls':
      return `TLS failure (${reason})`;
    case 'timeout':
      return 'no answer in time';
    case 'reset':
      return `connection dropped (${reason})`;
    case 'not_v0':
      return 'not a /v0 API';
    default:
      return reason;
  }
}

/** `retrying GET /v0/users in 2 s (1/4): connection refused` */
export function retryLine(event: RetryEvent): string {
  const s = event.delayMs / 1000;
  const wait =
    event.delayMs < 1000
      ? `${event.delayMs} ms`
      : s >= 10 || Number.isInteger(s)
        ? `${Math.round(s)} s`
        : `${s.toFixed(1)} s`;
  return `retrying ${event.method} ${event.path} in ${wait} (${event.retry}/${event.retries}): ${whyShort(event.error.facts)}`;
}

/**
 * What `onRetry` hands each retry to: every retry's line, but a refused connection's once per
 * client (nothing listening is one fact, however many calls and retries meet it); the error that
 * ends the calls follows.
 */
export function retryAnnouncer(write: (line: string) => void): (event: RetryEvent) => void {
  let refusedSaid = false;
  return (event) => {
    if (event.error.problem === 'refused') {
      if (refusedSaid) return;
      refusedSaid = true;
    }
    write(retryLine(event));
  };
}

function whyShort(facts: ApiErrorFacts): string {
  if (facts.problem) return problemPhrase(facts.problem, facts.reason);
  const reason = reasonText(facts);
  return `${facts.status}${reason ? ` ${reason}` : ''}`;
}
