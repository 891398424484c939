/** What the readers of a CDKTF stack share: where a value is, and the mark of a read that failed. */
import type { DocPath } from '../positions.js';

/** Where a value is: its place in the JSON document and the Terraform address people know it by. */
export interface Site {
  docPath: DocPath;
  /** `firezone_device.alice_laptop.mtu` */
  address: string;
}

/** A failed read: its diagnostic has been reported already. */
export const FAILED = Symbol('failed');

export type Failed = typeof FAILED;

/** Reports a problem of the value at `site` (at its key with `ofKey`); returns FAILED. */
export type Report = (site: Site, message: string, ofKey?: boolean) => Failed;

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type Mapping = Record<string, unknown>;
