/** Failures of a store that the CLI reports in one line, whichever database is behind it. */

/** The database could not be opened or reached; `message` names it (never with a password). */
export class StoreOpenError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreOpenError';
  }
}

/** The database file a command was pointed at does not exist (and the command may not create it). */
export class MissingDatabaseError extends Error {
  constructor(readonly path: string) {
    super(`no database at ${path}`);
    this.name = 'MissingDatabaseError';
  }
}

/**
 * The database cannot be reached right now: the connection was refused or lost, or the database
 * is shutting down or starting up. Nothing of the failed operation was kept (a COMMIT cut off in
 * flight excepted: its outcome is unknown); the same request may succeed once it is back, so
 * the server answers 503 with Retry-After. `message` names no host, user or password.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** `postgres://user:secret@host/db` as `postgres://user@host/db`, for messages and logs. */
export function redactLocation(location: string): string {
  try {
    const url = new URL(location);
    if (url.password) url.password = '';
    for (const key of [...url.searchParams.keys()]) if (/pass/i.test(key)) url.searchParams.set(key, '***');
    return url.toString();
  } catch {
    return location.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1@');
  }
}

export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}
