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

/**
 * The request's token no longer authenticates it, found inside its write transaction (the owner
 * was demoted, disabled or deleted, or the token revoked, since the auth hook accepted it):
 * answered as the auth hook would have answered it then (401 with `body`).
 */
export class AuthenticationError extends Error {
  constructor(readonly body: Record<string, unknown>) {
    super('the token no longer authenticates this request');
    this.name = 'AuthenticationError';
  }
}

/** A refusal of a server administration command (token or defaults), with a message for people. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}
