/** What `netform adopt` is asked for and what it reports, object by object. */

/** Which objects to adopt: the named keys (change-id notation, normalised), or all that drift reports. */
export type AdoptSelection = { all: true } | { all: false; ids: ReadonlySet<string> };

/** Where a new object was written, and why there. */
export type Placement =
  | 'user-file' // the file that declares its user
  | 'into' // the file --into names
  | 'rules-file' // the file that already declares global rules
  | 'split' // the file `export --split` would write it to
  | 'single'; // the one file named with -f

/**
 * One line of adopt's report. `written` objects are in the diff; every other kind is something
 * adopt left as it was, and says why.
 */
export type AdoptNote =
  | { kind: 'updated'; id: string; file: string; fields: string[] }
  | { kind: 'added'; id: string; file: string; placement: Placement; created: boolean }
  | { kind: 'renamed'; id: string; from: string; file: string }
  | { kind: 'removed'; id: string; file: string }
  | { kind: 'acknowledgement-removed'; id: string; file: string }
  /** A changed secret (preshared key, password): never written; its reference stays. */
  | { kind: 'secret'; id: string; field: string }
  /** Declared, not on the server: removed only with --remove-deleted. */
  | { kind: 'deleted'; id: string; file: string }
  | { kind: 'protected'; id: string }
  | { kind: 'outside-manage'; id: string }
  /** The difference exists because a grant expired: renewed by editing `expires`, never by adopt. */
  | { kind: 'expired'; id: string; since: string }
  /** Named, but the files already declare it as the server holds it. */
  | { kind: 'matches'; id: string }
  /** Named, but neither the server nor the files have it. */
  | { kind: 'unknown'; id: string }
  /** A difference adopt does not write (a field it has no rule for, the configuration). */
  | { kind: 'not-adoptable'; id: string; what: string };
