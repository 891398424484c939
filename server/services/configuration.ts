/**
 * `/v0/configuration` (upstream 0.7.36's singleton): show and partial update. Its
 * `default_client_*` fields are the server's device defaults (the settings `netform server
 * defaults` changes), so a change here is what every device on those defaults shows next.
 * The other fields are stored and echoed; OpenID Connect client secrets are write-only.
 */
import {
  DEFAULT_CLIENT_FIELDS,
  checkConfigurationInput,
  type ApiConfiguration,
  type ConfigurationValues,
  type RawInput,
} from '../../src/model/index.js';
import { timestampAfter } from '../clock.js';
import { ValidationError } from '../errors.js';
import type { StoreReader } from '../store/index.js';
import { writeTransaction, type ServiceContext } from './context.js';
import {
  CONFIGURATION_ID,
  CONFIGURATION_INSERTED_AT,
  CONFIGURATION_KEYS,
  CONFIGURATION_UPDATED_AT,
  readSettings,
} from './settings.js';
import { configurationView } from './views.js';

export interface StoredConfiguration {
  id: string;
  values: ConfigurationValues;
  inserted_at: string;
  updated_at: string;
}

/** The settings key of a configuration field: a device default under its short name, or its own name. */
function settingKey(field: keyof ConfigurationValues): string {
  return (DEFAULT_CLIENT_FIELDS as Record<string, string>)[field] ?? field;
}

export async function readConfiguration(store: StoreReader): Promise<StoredConfiguration> {
  const stored = await store.getSettings();
  const { defaults } = await readSettings(store);
  const values = {} as Record<string, unknown>;
  for (const [field, key] of Object.entries(DEFAULT_CLIENT_FIELDS)) values[field] = defaults[key];
  for (const key of CONFIGURATION_KEYS) values[key] = stored[key];
  return {
    id: String(stored[CONFIGURATION_ID]),
    values: values as unknown as ConfigurationValues,
    inserted_at: String(stored[CONFIGURATION_INSERTED_AT]),
    updated_at: String(stored[CONFIGURATION_UPDATED_AT]),
  };
}

export async function showConfiguration(ctx: ServiceContext): Promise<ApiConfiguration> {
  return configurationView(await readConfiguration(ctx.store));
}

/** A partial update: only the keys present change; nothing changed means no write and the same `updated_at`. */
export async function updateConfiguration(ctx: ServiceContext, body: RawInput): Promise<ApiConfiguration> {
  return writeTransaction(ctx, async (tx) => {
    const current = await readConfiguration(tx);
    const secrets = new Map(current.values.openid_connect_providers.map((p) => [p.id, p.client_secret]));
    const checked = checkConfigurationInput(body, { storedClientSecret: (id) => secrets.get(id) ?? null });
    if (!checked.ok) throw new ValidationError(checked.errors);
    const values: Record<string, unknown> = { ...current.values };
    let changed = false;
    for (const [field, value] of Object.entries(checked.value) as [keyof ConfigurationValues, unknown][]) {
      if (value === undefined || JSON.stringify(value) === JSON.stringify(values[field])) continue;
      await tx.setSetting(settingKey(field), value);
      values[field] = value;
      changed = true;
    }
    if (!changed) return configurationView(current);
    const updated_at = timestampAfter(ctx.clock, current.updated_at);
    await tx.setSetting(CONFIGURATION_UPDATED_AT, updated_at);
    return configurationView({ ...current, values: values as unknown as ConfigurationValues, updated_at });
  });
}
