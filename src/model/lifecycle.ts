/**
 * Two top-level lists of the desired state about live objects the files do not (or no longer)
 * hold to their declarations: `acknowledged:` (a difference from the files accepted until a date)
 * and `forget:` (objects the repository stops managing without deleting them). Plain data; what
 * they do to a plan is src/plan/lifecycle.ts.
 */
import type { SourceLocation } from './state.js';

/** One entry of `acknowledged:`. */
export interface DesiredAcknowledgement {
  /** The object's key as `show` and `--target` take it, in normal form: `device:alice@example.com/laptop`. */
  key: string;
  /** A field of the object, or `*` for the object as a whole. */
  field: string;
  /** For a field: the live value acknowledged. */
  value?: unknown;
  /** For `*`: the live object's fingerprint (src/plan/lifecycle.ts liveFingerprint). */
  fingerprint?: string;
  reason: string;
  /** Until when the difference is acknowledged, as written (`2026-12-31`), and as an instant. */
  until: string;
  untilInstant: Date;
  source?: SourceLocation;
}

/** One entry of `forget:`: an object key in the same notation. */
export interface DesiredForget {
  key: string;
  source?: SourceLocation;
}
