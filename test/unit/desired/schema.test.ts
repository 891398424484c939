/**
 * The JSON Schema serves editors; the model serves validation. These tests keep the two from
 * drifting apart, and keep the schema helpful: every property documented with examples that are
 * themselves valid.
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESIRED_STATE_SCHEMA } from '../../../src/desired/schema.js';
import {
  DEVICE_DESCRIPTION_MAX_LENGTH,
  DEVICE_NAME_MAX_LENGTH,
  MTU_BOUNDS,
  PERSISTENT_KEEPALIVE_BOUNDS,
  WIREGUARD_KEY_LENGTH,
  wireguardKeyMessages,
} from '../../../src/model/device.js';
import { HIGHEST_RULE_PORT, parsePortRange } from '../../../src/model/ports.js';
import {
  DEFAULTABLE_DEVICE_FIELDS,
  PORT_TYPES,
  ROLES,
  RULE_ACTIONS,
  TEST_EXPECTATIONS,
} from '../../../src/model/types.js';
import { checkEmail, EMAIL_MAX_LENGTH } from '../../../src/model/user.js';

type Schema = Record<string, any>;
const schema = DESIRED_STATE_SCHEMA as Schema;
const defs = schema.$defs as Record<string, Schema>;

/** Every `properties` entry of the schema, with its JSON pointer. */
function properties(node: unknown, pointer = ''): { pointer: string; name: string; schema: Schema }[] {
  if (typeof node !== 'object' || node === null) return [];
  const found: { pointer: string; name: string; schema: Schema }[] = [];
  for (const [key, value] of Object.entries(node)) {
    const here = `${pointer}/${key}`;
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      for (const [name, sub] of Object.entries(value))
        found.push({ pointer: `${here}/${name}`, name, schema: sub as Schema });
    }
    if (key !== 'examples' && key !== 'default') found.push(...properties(value, here));
  }
  return found;
}

/** Every object schema (one with `properties`). */
function objectSchemas(node: unknown, pointer = ''): { pointer: string; schema: Schema }[] {
  if (typeof node !== 'object' || node === null) return [];
  const found: { pointer: string; schema: Schema }[] = [];
  if ('properties' in node) found.push({ pointer, schema: node as Schema });
  for (const [key, value] of Object.entries(node))
    if (key !== 'examples' && key !== 'properties') found.push(...objectSchemas(value, `${pointer}/${key}`));
  for (const [name, sub] of Object.entries((node as Schema).properties ?? {}))
    found.push(...objectSchemas(sub, `${pointer}/properties/${name}`));
  return found;
}

describe('the schema helps editors', () => {
  const all = properties(schema);

  it('documents every property with a description and examples', () => {
    expect(all.length).toBeGreaterThan(40);
    const undocumented = all
      .filter((p) => typeof p.schema.description !== 'string' || p.schema.description.length < 10)
      .map((p) => p.pointer);
    const withoutExamples = all
      .filter((p) => !Array.isArray(p.schema.examples) || p.schema.examples.length === 0)
      .map((p) => p.pointer);
    expect(undocumented).toEqual([]);
    expect(withoutExamples).toEqual([]);
  });

  it('catches typos: every object refuses unknown keys', () => {
    const open = objectSchemas(schema)
      .filter((o) => o.schema.additionalProperties !== false)
      .map((o) => o.pointer || '/');
    expect(open).toEqual([]);
  });

  it('has examples that are valid for their property', () => {
    const ajv = new Ajv2020Module.default({ strict: true, allowUnionTypes: true });
    ajv.addSchema(schema);
    const invalid: string[] = [];
    for (const p of all) {
      const validate = ajv.compile({ $ref: `${schema.$id}#${p.pointer}` });
      for (const example of p.schema.examples)
        if (!validate(example)) invalid.push(`${p.pointer}: ${JSON.stringify(example)}`);
    }
    expect(invalid).toEqual([]);
  });

  it('is what the example files point their editors at', () => {
    const files = ['examples/basic', 'examples/multi-team/payments', 'examples/multi-team/search'].flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f) && statSync(join(dir, f)).isFile())
        .map((f) => join(dir, f)),
    );
    expect(files.length).toBeGreaterThanOrEqual(7);
    for (const file of files) {
      const first = readFileSync(file, 'utf8').split('\n')[0]!;
      const match = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
      expect(match, file).not.toBeNull();
      const target = resolve(dirname(file), match![1]!);
      expect(existsSync(target), file).toBe(true);
      expect(target).toBe(resolve('schemas/netform.schema.json'));
    }
  });
});

describe('the schema agrees with the model', () => {
  const device = defs.device!.properties as Record<string, Schema>;
  const rule = defs.rule!.properties as Record<string, Schema>;

  it('has the same bounds, lengths and enumerations', () => {
    expect([device.mtu!.minimum, device.mtu!.maximum]).toEqual([MTU_BOUNDS.min, MTU_BOUNDS.max]);
    expect([device.persistent_keepalive!.minimum, device.persistent_keepalive!.maximum]).toEqual([
      PERSISTENT_KEEPALIVE_BOUNDS.min,
      PERSISTENT_KEEPALIVE_BOUNDS.max,
    ]);
    expect(device.name!.maxLength).toBe(DEVICE_NAME_MAX_LENGTH);
    expect(device.description!.maxLength).toBe(DEVICE_DESCRIPTION_MAX_LENGTH);
    expect([defs.wireguardKey!.minLength, defs.wireguardKey!.maxLength]).toEqual([
      WIREGUARD_KEY_LENGTH,
      WIREGUARD_KEY_LENGTH,
    ]);
    expect(defs.email!.maxLength).toBe(EMAIL_MAX_LENGTH);
    expect(defs.user!.properties.role.enum).toEqual([...ROLES]);
    expect(rule.action!.enum).toEqual([...RULE_ACTIONS]);
    expect(rule.port_type!.enum).toEqual([...PORT_TYPES]);
    expect((defs.test!.properties as Record<string, Schema>).expect!.enum).toEqual([...TEST_EXPECTATIONS]);
    expect([rule.port_range!.minimum, rule.port_range!.maximum]).toEqual([1, HIGHEST_RULE_PORT]);
  });

  it('offers every defaultable device field with its use_default flag', () => {
    for (const field of DEFAULTABLE_DEVICE_FIELDS) {
      expect(device).toHaveProperty(field);
      expect(device).toHaveProperty(`use_default_${field}`);
    }
  });

  it('has patterns that accept what the model accepts and refuse what it refuses', () => {
    const email = new RegExp(defs.email!.pattern);
    for (const text of [
      'alice@example.com',
      'a@b',
      ' a@b ',
      'a b@c',
      'a@b@c',
      '@b',
      'a@',
      'plain',
      'x+tag@sub.example.org',
    ]) {
      expect(email.test(text), text).toBe(checkEmail(text).ok);
    }
    const key = new RegExp(defs.wireguardKey!.pattern);
    for (const text of [
      'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=',
      'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1B=',
      'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A',
      'a6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1==',
      '-6AiqHg3kQ3fepsVVJCJayNNPq3C2wiQU1pLxXGos1A=',
    ]) {
      expect(key.test(text), text).toBe(wireguardKeyMessages(text).length === 0);
    }
    const ports = new RegExp(rule.port_range!.pattern);
    for (const text of ['80', '80-443', '80 - 443', ' 80 ', '80-', '-80', 'http', '80,443', '1-2-3']) {
      const parsed = parsePortRange(text);
      expect(ports.test(text), text).toBe(parsed.ok || parsed.message !== 'bad format');
    }
  });
});
