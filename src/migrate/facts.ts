/**
 * What the migration's 1.x side was read from (docs/firezone-1x.md): the upstream and provider
 * commits, the first client versions with firezone#12684, and the API's rate limit.
 */
export const UPSTREAM_COMMIT = 'df8139e82dd537f4bc99af32f7f94033b809ef3e';
export const PROVIDER_COMMIT = '17060f2a92b872a2c4cb1cc21f47cdaa94f9932b';
/** The website changelog, read at the parent of the commit that moved it out of firezone/firezone. */
export const CHANGELOG_COMMIT = '94abb7894c7ede0fb0087a319ef1973631c737e6';

/** Per platform, the first client version whose changelog lists firezone#12684 (routing by filter). */
export const FILTER_ROUTING_CLIENTS: readonly { platform: string; version: string; date: string }[] = [
  { platform: 'Apple (macOS, iOS)', version: '1.5.15', date: '2026-04-27' },
  { platform: 'Android', version: '1.5.10', date: '2026-04-28' },
  { platform: 'GUI (Windows, Linux)', version: '1.5.12', date: '2026-04-27' },
  { platform: 'Headless (Linux, Windows)', version: '1.5.8', date: '2026-04-27' },
];

/** The API's token bucket: 200 tokens, 10 a second, 10 a request: a burst of 20, then one request a second. */
export const RATE_LIMIT = { capacity: 200, refillPerSecond: 10, costPerRequest: 10 } as const;

/** Seconds Terraform needs for `requests` requests under the rate limit (about one per object to create, one per object to refresh). */
export function secondsFor(requests: number): number {
  const burst = RATE_LIMIT.capacity / RATE_LIMIT.costPerRequest;
  const perSecond = RATE_LIMIT.refillPerSecond / RATE_LIMIT.costPerRequest;
  return Math.max(0, Math.ceil((requests - burst) / perSecond));
}
