import type { Clock } from '../clock.js';
import type { Store } from '../store/index.js';

/** What every service works with; built once per server from its options. */
export interface ServiceContext {
  store: Store;
  clock: Clock;
  /** Emulate upstream 0.7.26+: device updates change only name and description. */
  legacyDeviceUpdates: boolean;
}
