import { isPlainObject, type RawInput } from '../../src/model/index.js';
import { BadRequestError } from '../errors.js';

/** The object inside the request's one wrapper key (`user`, `device`, `rule`, `configuration`); 400 otherwise. */
export function unwrap(body: unknown, key: string): RawInput {
  if (!isPlainObject(body)) throw new BadRequestError('request body is not a JSON object');
  const inner = body[key];
  if (!isPlainObject(inner)) throw new BadRequestError(`request body has no "${key}" object`);
  return inner;
}
