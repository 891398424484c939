/**
 * The periodic access review as an operation: read the live server (and, with a desired state,
 * its rule locations and access tests), learn whether the server records telemetry, and build
 * the report (src/review, pure). Writing the report to a file is writeReviewFile.
 */
import { writeFileAtomically } from '../model/files.js';
import { buildReview, telemetrySupport, type ReviewReport } from '../review/index.js';
import { DEFAULT_EXPIRING_DAYS, reviewExpiries } from '../review/expiries.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import type { OpEvents } from './events.js';
import { afterApplyOnSession } from './access.js';
import { readLiveState, type Connector } from './session.js';

export interface ReviewRequest {
  /** The desired state: rules carry its `file:line` and its access tests run against the server. */
  file?: string;
  connect: Connector;
  /** A device with no handshake in this many days is listed as stale. */
  staleDays: number;
  now?: Date;
  /** Run the access tests on the server as apply would leave it (needs `file`): the files planned against it, nothing written. */
  afterApply?: boolean;
  /** Where the file's secrets are read from. */
  input?: DesiredInput;
  /** With `file`: grants expiring within this many days are listed. Default 14. */
  expiringDays?: number;
}

/** The review of the server `connect` opens. Bad files stop it before the server is read. */
export async function reviewServer(
  request: ReviewRequest,
  events: OpEvents = {},
  signal?: AbortSignal,
): Promise<ReviewReport> {
  const desired = request.file ? await loadDesired(request.file, events, loaderFor(request.input)) : undefined;
  if (request.afterApply && !desired) throw new OpError('request', { code: 'review_after_apply_needs_files' });
  signal?.throwIfAborted();
  const session = await request.connect.open();
  try {
    const live = await readLiveState(session);
    // The state read here has no configuration: files that declare one are planned on their own read.
    const reuse = desired?.configuration === undefined ? live : undefined;
    const after =
      request.afterApply && desired ? await afterApplyOnSession(session, desired, events, reuse) : undefined;
    // The bundled server records handshakes and sign-ins; a remote one says so in its OpenAPI document.
    const ownServer = request.connect.embedded ? true : await session.client.isNetformServer();
    const now = request.now ?? new Date();
    const report = buildReview({
      live,
      ...(desired ? { desired } : {}),
      telemetry: telemetrySupport(live, ownServer),
      now,
      staleDays: request.staleDays,
      server: session.url,
      ...(after ? { testsAfterApply: after.repositoryModel() } : {}),
    });
    if (desired) report.expiries = reviewExpiries(desired, live, now, request.expiringDays ?? DEFAULT_EXPIRING_DAYS);
    return report;
  } finally {
    await session.close();
  }
}

/** The review into `path`, replaced whole (a device or FIFO is written in place). */
export async function writeReviewFile(path: string, text: string): Promise<void> {
  try {
    writeFileAtomically(path, text);
  } catch (error) {
    throw new OpError('export', `-o: cannot write ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
