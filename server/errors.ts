/** The failures a service can report; the app turns each into the contract's status and body. */
import type { FieldErrors } from '../src/model/index.js';

export class NotFoundError extends Error {
  constructor() {
    super('not_found');
    this.name = 'NotFoundError';
  }
}

export class BadRequestError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BadRequestError';
  }
}

export class ValidationError extends Error {
  constructor(readonly errors: FieldErrors) {
    super(`validation failed on ${Object.keys(errors).join(', ')}`);
    this.name = 'ValidationError';
  }
}

/** A refusal of a server administration command (token or defaults), with a message for people. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}
