/**
 * What `netform check no-access-to` asks about: `BLOCK` (every protocol and port to any address of
 * an address or a block), or `BLOCK:PORT/PROTO` and `BLOCK:LOW-HIGH/PROTO` (tcp or udp; IPv6 as
 * `[BLOCK]:PORT/PROTO`). Pure.
 */
import { cidrRange } from '../model/net.js';
import { parsePortRange } from '../model/ports.js';
import { everyPacketRegion } from './destination.js';
import type { Parsed } from './notation.js';
import type { Region } from './partition.js';

export const GATE_TARGET_HELP =
  'must be BLOCK (an address or ADDRESS/PREFIX: every protocol and port), or BLOCK:PORT/tcp, BLOCK:LOW-HIGH/udp (IPv6 as [BLOCK]:PORT/tcp)';

export interface GateTarget {
  text: string;
  region: Region;
}

export function parseGateTarget(input: string): Parsed<GateTarget> {
  const text = input.trim();
  const withPort = /^(.*):([0-9]+(?:-[0-9]+)?)\/(tcp|udp)$/i.exec(text);
  let block = withPort ? withPort[1]! : text;
  if (block.startsWith('[') && block.endsWith(']')) block = block.slice(1, -1);
  else if (withPort && block.includes(':'))
    return { ok: false, message: `${GATE_TARGET_HELP}; write an IPv6 block with a port in brackets` };
  const range = cidrRange(block);
  if (!range) return { ok: false, message: `${GATE_TARGET_HELP}; "${block}" is not an address or a block` };
  const every = everyPacketRegion({ family: range.family, a0: range.start, a1: range.end });
  if (!withPort) return { ok: true, value: { text, region: every } };
  const ports = parsePortRange(withPort[2]);
  if (!ports.ok) return { ok: false, message: `${GATE_TARGET_HELP}; port ${withPort[2]}: ${ports.message}` };
  const cls = withPort[3]!.toLowerCase() === 'tcp' ? 0 : 1;
  return { ok: true, value: { text, region: { ...every, classes: [cls], p0: ports.range.low, p1: ports.range.high } } };
}
