/** Where drift reports go: a stream as JSON lines, a file kept atomically, a webhook. */
import type { RequestError } from 'got';
import { writeFileAtomically } from '../model/files.js';
import { inertWorkflowCommands } from '../model/inert.js';
import type { ReportSink } from './loop.js';
import { driftSignature, redactSecrets, type DriftReport, type DriftStatus } from './report.js';

/** One JSON line per report (stdout in the CLI). */
export function jsonLinesSink(write: (text: string) => void): ReportSink {
  return {
    name: 'stdout',
    async deliver(report) {
      write(`${inertWorkflowCommands(JSON.stringify(report), { lineStarts: false })}\n`);
    },
  };
}

/**
 * Keeps the latest report in `path`: written to a temporary file in the same folder, then renamed
 * over the old one, so a reader never sees a half-written report.
 */
export function reportFileSink(path: string): ReportSink {
  return {
    name: `report file ${path}`,
    async deliver(report) {
      writeFileAtomically(path, `${inertWorkflowCommands(JSON.stringify(report, null, 2), { lineStarts: false })}\n`);
    },
  };
}

export interface WebhookOptions {
  url: string;
  /** The report's `text` for people (a chat shows it): src/views/drift.ts driftText. */
  text: (report: DriftReport, previous: DriftStatus | null) => string;
  /** Also POST every drifted run, not only those whose status changed. */
  always?: boolean;
  /** Retries after the first attempt, on network errors, 408, 429 and 5xx. Default 3. */
  retries?: number;
  /** First backoff delay; doubled on each retry. Default 1000 ms. */
  backoffMs?: number;
  /** Longest backoff delay, also the cap on a server's Retry-After. Default 2,000 ms. */
  maxBackoffMs?: number;
  /** Timeout of one attempt. Default 5,000 ms (never more than the whole delivery's bound). */
  attemptTimeoutMs?: number;
  /** Bound on the whole delivery, retries included, so a dead receiver costs a run at most this. Default 5,000 ms. */
  totalTimeoutMs?: number;
  userAgent?: string;
  /** Values that must never appear in a logged error (the API token). */
  secrets?: string[];
  log?: (message: string) => void;
}

/**
 * POSTs a report when it says something new: the first report, every change of status (so also
 * recovery), every change in the set of differences while drift is open, and a change whose
 * delivery failed earlier; every drifted report with `always`. The body is the report plus a
 * `text` summary for chat webhooks; no API token, no credentials.
 */
export function webhookSink(options: WebhookOptions): ReportSink & { lastDeliveredStatus(): DriftStatus | null } {
  const retries = options.retries ?? 3;
  const backoffMs = options.backoffMs ?? 1000;
  const maxBackoffMs = options.maxBackoffMs ?? 2_000;
  const shownUrl = describeWebhookUrl(options.url);
  const secrets = [options.url, ...(options.secrets ?? [])];
  let lastDelivered: DriftStatus | null = null;
  let lastSignature: string | null = null;

  return {
    name: `webhook ${shownUrl}`,
    lastDeliveredStatus: () => lastDelivered,
    async deliver(report) {
      const signature = driftSignature(report);
      const wanted = signature !== lastSignature || (options.always === true && report.status === 'drift');
      if (!wanted) return;
      const totalTimeoutMs = options.totalTimeoutMs ?? 5_000;
      const deadline = AbortSignal.timeout(totalTimeoutMs);
      let attempts = 1;
      let requestError: typeof RequestError | undefined;
      try {
        // got and its dependencies, loaded by the first delivery: a schedule without a webhook never loads them.
        const { default: got, RequestError } = await import('got');
        requestError = RequestError;
        const response = await got.post(options.url, {
          json: { ...report, text: options.text(report, lastDelivered) },
          headers: { 'user-agent': options.userAgent ?? 'netform' },
          timeout: { request: Math.min(options.attemptTimeoutMs ?? 5_000, totalTimeoutMs) },
          signal: deadline,
          followRedirect: false,
          throwHttpErrors: true,
          retry: {
            limit: retries,
            methods: ['POST'],
            maxRetryAfter: maxBackoffMs,
            calculateDelay: ({ attemptCount, computedValue, retryAfter }) => {
              if (computedValue === 0) return 0;
              return Math.min(retryAfter ?? backoffMs * 2 ** (attemptCount - 1), maxBackoffMs);
            },
          },
          hooks: {
            beforeRetry: [
              (error, retryCount) => {
                attempts = retryCount + 1;
                options.log?.(
                  `drift: webhook ${shownUrl}: attempt ${retryCount} failed (${redactSecrets(describeRequestError(error, RequestError), secrets)}); retrying`,
                );
              },
            ],
          },
        });
        // got counts a 3xx as an answer when it follows no redirect: the report went nowhere.
        if (response.statusCode < 200 || response.statusCode > 299) {
          throw new Error(
            `answered ${response.statusCode}${response.statusCode >= 300 && response.statusCode < 400 ? ' (a redirect, which is not followed: give the final URL)' : ''}`,
          );
        }
        lastDelivered = report.status;
        lastSignature = signature;
      } catch (error) {
        const reason = deadline.aborted
          ? `no answer within ${totalTimeoutMs} ms`
          : describeRequestError(error, requestError);
        // eslint-disable-next-line preserve-caught-error -- the cause may carry the URL's credentials; its redacted text is in the message
        throw new Error(`POST failed after ${attempts} attempt(s): ${redactSecrets(reason, secrets)}`);
      }
    },
  };
}

function describeRequestError(error: unknown, requestError: typeof RequestError | undefined): string {
  if (requestError && error instanceof requestError) {
    const status = error.response?.statusCode;
    return status ? `answered ${status}` : `${error.code}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The webhook's origin only: paths and queries of webhooks often hold a secret (Slack, Teams). */
export function describeWebhookUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(webhook)';
  }
}
