/** Shapes every /v0 conformance test checks against (docs/rule-semantics.md §1). */

/** The content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';
/** Timestamps: ISO 8601 in UTC with microseconds. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** Ids: UUID version 4. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
