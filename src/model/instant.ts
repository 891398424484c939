/**
 * Instants written in the desired state and on the command line (`expires:`, `until:`, `--now`):
 * a date (`2026-12-31`, meaning 00:00 UTC that day) or a date-time with an offset
 * (`2026-12-31T18:00:00+01:00`, `...Z`). Always read from a string, never a YAML timestamp; a
 * date-time without an offset is refused (its instant would depend on the machine's zone).
 */

/** Why a text is not an instant, as a code (src/views/model-instant.ts words it). */
export type InstantProblem =
  /** Not a string (YAML read it as a number or a timestamp): it must be quoted. */
  | { code: 'not_a_string' }
  /** Neither a date nor a date-time with an offset. */
  | { code: 'not_an_instant' }
  /** A date of the right shape that no calendar has (`2026-02-30`). */
  | { code: 'no_such_day'; text: string }
  /** A date-time of the right shape that no clock shows (`2026-12-31T24:00:00Z`). */
  | { code: 'no_such_instant'; text: string };

export type InstantParse = { ok: true; instant: Date } | { ok: false; problem: InstantProblem };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/;

function validDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= days;
}

export function parseInstant(text: unknown): InstantParse {
  if (typeof text !== 'string') return { ok: false, problem: { code: 'not_a_string' } };
  const date = DATE.exec(text);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    if (!validDay(y, m, d)) return { ok: false, problem: { code: 'no_such_day', text } };
    return { ok: true, instant: new Date(Date.UTC(y, m - 1, d)) };
  }
  const dt = DATE_TIME.exec(text);
  if (!dt) return { ok: false, problem: { code: 'not_an_instant' } };
  const [y, m, d, h, min, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(dt[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!validDay(y, m, d) || h > 23 || min > 59 || s > 59)
    return { ok: false, problem: { code: 'no_such_instant', text } };
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return { ok: false, problem: { code: 'not_an_instant' } };
  return { ok: true, instant: new Date(ms) };
}

/** The instant as it is written back: a date when it is 00:00 UTC, else an ISO date-time in UTC. */
export function formatInstant(instant: Date): string {
  const iso = instant.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z');
}
