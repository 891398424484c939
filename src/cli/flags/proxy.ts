/** `--trust-proxy` of `netform serve`: which X-Forwarded-For entries name the client. */
import { parseCidrOrAddress } from '../../model/index.js';
import { CliError } from '../exit.js';

/** proxy-addr's names of address ranges, which --trust-proxy takes besides addresses and blocks. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * A hop count (a whole number N: every request comes through exactly N proxies, the connection's
 * peer and the last N - 1 entries of X-Forwarded-For, so the client is the Nth entry from the
 * end), or a comma-separated list of the proxies' addresses, CIDR blocks and the names loopback,
 * linklocal, uniquelocal (X-Forwarded-For is believed hop by hop while the hop is one of those).
 * A bare number used to be read as an IPv4 address (`1` was 0.0.0.1).
 */
export function parseTrustProxy(text: string | undefined): string | number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    if (hops < 1 || hops > 100)
      throw new CliError(
        `--trust-proxy ${trimmed}: a hop count is from 1 to 100 (leave the flag out to trust no proxy)`,
      );
    return hops;
  }
  const entries: string[] = [];
  for (const entry of trimmed.split(',').map((s) => s.trim())) {
    if (PROXY_RANGE_NAMES.includes(entry)) {
      entries.push(entry);
      continue;
    }
    const block = parseCidrOrAddress(entry);
    if (!block)
      throw new CliError(
        `--trust-proxy: ${JSON.stringify(entry)} is not a hop count, an IP address, a CIDR block, or one of ${PROXY_RANGE_NAMES.join(', ')}`,
      );
    if (block.prefix === 0)
      throw new CliError(
        `--trust-proxy: ${JSON.stringify(entry)} would trust every address, so any client could pick the address it is ` +
          'logged and rate limited under; name the proxies (or give a hop count)',
      );
    entries.push(block.network);
  }
  return entries.join(',');
}
