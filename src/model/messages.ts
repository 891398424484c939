/**
 * The exact English messages of the /v0 contract (docs/api-v0.md section 2).
 * Every validation error anywhere in netform (server 422 answers, `netform validate`) uses these.
 */
export const Messages = {
  blank: "can't be blank",
  invalid: 'is invalid',
  taken: 'has already been taken',
  doesNotExist: 'does not exist',
  tooShort: (count: number) => `should be at least ${count} character(s)`,
  tooLong: (count: number) => `should be at most ${count} character(s)`,
  wrongLength: (count: number) => `should be ${count} character(s)`,
  greaterOrEqual: (number: number) => `must be greater than or equal to ${number}`,
  lessOrEqual: (number: number) => `must be less than or equal to ${number}`,
  base64: 'must be a base64-encoded string',
  duplicates: 'should not contain duplicates',
  mustNotBePresent: 'must not be present',
  confirmation: 'does not match confirmation',
  notInCidr: (cidr: string) => `is not in the CIDR ${cidr}`,
  reserved: 'is reserved',
  exhausted: (cidr: string) => `CIDR ${cidr} is exhausted`,
  overlaps: 'destination overlaps with an existing rule',
  badFormat: 'bad format',
  lowerHigher: 'lower value cannot be higher than upper value',
  portRange: 'port is not within valid range',
  ownRole: 'You cannot change your own role',
  lastAdminDelete: 'cannot delete the last admin',
  lastAdminDemote: 'cannot demote the last admin',
  deviceLimit: 'Maximum device limit reached. Remove an existing device before creating a new one.',
  tokenLimit: (count: number) => `token limit of ${count} reached`,
  // The configuration's sign-in providers (upstream's wording).
  uriNoHost: 'does not contain a scheme or a host',
  uriScheme: 'only http, https schemes are supported',
  scopeOpenid: 'must include openid scope',
  scopeEmail: 'must include email scope',
} as const;
