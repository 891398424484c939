/** What export is asked for and what it gives: options, files, counts, and the error it refuses with. */
import type { ApiConfiguration } from '../../model/configuration.js';
import type { ApiDevice, ApiRule, ApiUser } from '../../model/types.js';

export interface ExportOptions {
  /**
   * Write each device's `ipv4`/`ipv6` (default true). Pinned addresses survive a device being
   * recreated (replace) and a hand change of them shows as drift; left out, they are unmanaged
   * and the server keeps choosing them.
   */
  addresses?: boolean;
  /**
   * Also write what is at its default (`role: unprivileged`, `use_default_<x>: true`), so that it
   * is managed too: a hand promotion to admin or a device taken off a default then shows as
   * drift. Off by default: the files stay short and the defaults stay the server's business.
   */
  explicitDefaults?: boolean;
  /** One file per user plus one for the global rules, instead of one document. */
  split?: boolean;
  /**
   * Write `settings: { prune: true }` (default true): the export is the whole server, so the
   * repository owns it and whatever a later pull request removes is deleted.
   */
  prune?: boolean;
  /** What the `# yaml-language-server: $schema=` comment points at. */
  schemaRef: string;
  /** The server exported from, shown in the header comment (credentials are stripped). */
  server?: string;
}

export interface ExportedFile {
  /** A file name with no folder part, safe on every common file system. */
  name: string;
  content: string;
}

export interface ExportResult {
  files: ExportedFile[];
  /** What the files hold (the objects left out are not counted). */
  counts: { users: number; devices: number; rules: number };
  /**
   * Live objects the files leave out because no desired state can declare them as the server
   * holds them, one line each naming them by id and saying why (never quoting the value).
   */
  leftOut: string[];
}

/** The live state cannot be written as desired state without guessing (two objects, one key; an unknown owner). */
export class ExportError extends Error {
  constructor(readonly problems: string[]) {
    super(`the server's state cannot be exported as it is:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ExportError';
  }
}

/** The three lists of the live state, each awaited on its own (ExportLists of exportLiveState). */
export interface LiveLists {
  users: Promise<ApiUser[]>;
  devices: Promise<ApiDevice[]>;
  rules: Promise<ApiRule[]>;
  configuration: Promise<ApiConfiguration | undefined>;
}

/** An object named by `netform show KEY`: its kind and its live id. */
export interface NamedObject {
  kind: 'user' | 'device' | 'rule';
  id: string;
}
