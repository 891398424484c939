/**
 * Strings the field rules refuse (security review F9, F10, F15): a NUL or a lone UTF-16
 * surrogate in any string field is `is invalid`; emails also refuse control and invisible
 * characters and characters whose lower case is an ASCII letter (the one email key is the
 * Unicode lower case).
 */
import { describe, expect, it } from 'vitest';
import { checkConfigurationInput } from '../../../src/model/configuration.js';
import { checkDeviceInput } from '../../../src/model/device.js';
import type { Checked, FieldErrors } from '../../../src/model/errors.js';
import { isText } from '../../../src/model/fields.js';
import { userKey } from '../../../src/model/keys.js';
import { checkRuleInput } from '../../../src/model/rule.js';
import { checkEmail, checkUserInput, emailCharacterProblem } from '../../../src/model/user.js';
import { emailCharacterProblemText } from '../../../src/views/model-email.js';

/** Why an email is refused for a character, in the words validate prints (null when it is not). */
function characterProblemText(email: string): string | null {
  const problem = emailCharacterProblem(email);
  return problem && emailCharacterProblemText(problem);
}

const errorsOf = (r: Checked<unknown>): FieldErrors | undefined => (r.ok ? undefined : r.errors);

const KEY = Buffer.alloc(32, 7).toString('base64');
const USER_ID = '3f1b2c4d-5e6f-4a1b-8c2d-9e0f1a2b3c4d';
/** A NUL, a lone high surrogate, a lone low surrogate. */
const MALFORMED = { nul: '\u0000', high: '\ud800', low: '\udc00' } as const;

describe('isText', () => {
  it('is well-formed UTF-16 without NUL; a surrogate pair is fine', () => {
    expect(isText('laptop 😀')).toBe(true);
    expect(isText('\ud83d\ude00')).toBe(true);
    for (const bad of Object.values(MALFORMED)) expect(isText(`a${bad}b`)).toBe(false);
    expect(isText('\ude00\ud83d')).toBe(false);
    expect(isText(1)).toBe(false);
  });
});

describe('every string field: a NUL or a lone surrogate is `is invalid`', () => {
  /** [name, a valid body with `bad` inserted into the field's value, the error key and message expected]. */
  const cases: [string, (bad: string) => Checked<unknown>, string, string][] = [
    ['user email', (bad) => checkUserInput({ email: `a${bad}@example.com` }, 'create'), 'email', 'is invalid'],
    [
      'user password',
      (bad) => {
        const password = `${bad}-long-enough`;
        return checkUserInput({ email: 'a@example.com', password, password_confirmation: password }, 'create');
      },
      'password',
      'is invalid',
    ],
    ...(
      [
        ['name', (bad: string) => ({ name: `laptop${bad}` })],
        ['description', (bad: string) => ({ description: `work${bad}` })],
        ['public_key', (bad: string) => ({ public_key: `${KEY}${bad}` })],
        ['preshared_key', (bad: string) => ({ preshared_key: `${KEY}${bad}` })],
        ['endpoint', (bad: string) => ({ endpoint: `vpn${bad}.example.com`, use_default_endpoint: false })],
        ['ipv4', (bad: string) => ({ ipv4: `10.3.2.9${bad}` })],
        ['ipv6', (bad: string) => ({ ipv6: `fd00::9${bad}` })],
        [
          'allowed_ips',
          (bad: string) => ({ allowed_ips: ['10.0.0.0/8', `10.1.0.0/16${bad}`], use_default_allowed_ips: false }),
        ],
        ['dns', (bad: string) => ({ dns: [`dns${bad}.example.com`], use_default_dns: false })],
      ] as const
    ).map(
      ([field, body]) =>
        [
          `device ${field}`,
          (bad: string) => checkDeviceInput({ user_id: USER_ID, public_key: KEY, ...body(bad) }, 'create'),
          field,
          'is invalid',
        ] as [string, (bad: string) => Checked<unknown>, string, string],
    ),
    [
      'device user_id',
      (bad) => checkDeviceInput({ user_id: `${USER_ID}${bad}`, public_key: KEY }, 'create'),
      'user_id',
      'is invalid',
    ],
    [
      'rule destination',
      (bad) => checkRuleInput({ destination: `10.0.0.0/8${bad}` }, 'create'),
      'destination',
      'is invalid',
    ],
    [
      'rule port_range',
      (bad) => checkRuleInput({ destination: '10.0.0.0/8', port_type: 'tcp', port_range: `80${bad}` }, 'create'),
      'port_range',
      'is invalid',
    ],
    [
      'rule user_id',
      (bad) => checkRuleInput({ destination: '10.0.0.0/8', user_id: `${USER_ID}${bad}` }, 'create'),
      'user_id',
      'is invalid',
    ],
    [
      'configuration default_client_endpoint',
      (bad) => checkConfigurationInput({ default_client_endpoint: `vpn${bad}.example.com` }),
      'default_client_endpoint',
      'is invalid',
    ],
    [
      'configuration default_client_dns',
      (bad) => checkConfigurationInput({ default_client_dns: ['1.1.1.1', `dns${bad}.example.com`] }),
      'default_client_dns',
      'is invalid',
    ],
    [
      'configuration provider label',
      (bad) =>
        checkConfigurationInput({
          saml_identity_providers: [{ id: 'okta', label: `Okta ${bad}`, metadata: '<xml/>', auto_create_users: false }],
        }),
      'saml_identity_providers',
      'label is invalid',
    ],
    [
      'configuration provider client_secret',
      (bad) =>
        checkConfigurationInput({
          openid_connect_providers: [
            {
              id: 'google',
              label: 'Google',
              client_id: 'id',
              client_secret: `secret${bad}`,
              discovery_document_uri: 'https://accounts.google.com/.well-known/openid-configuration',
              auto_create_users: false,
            },
          ],
        }),
      'openid_connect_providers',
      'client_secret is invalid',
    ],
    [
      'configuration logo data',
      (bad) => checkConfigurationInput({ logo: { data: `base64${bad}`, type: 'image/png' } }),
      'logo',
      'data is invalid',
    ],
  ];

  for (const [name, check, field, message] of cases) {
    it(name, () => {
      // The same body without the inserted character passes.
      expect(errorsOf(check('')), 'the well-formed body').toBeUndefined();
      for (const [kind, bad] of Object.entries(MALFORMED)) {
        const errors = errorsOf(check(bad));
        expect(errors?.[field], kind).toContain(message);
      }
    });
  }

  it('a description or name with a surrogate pair (an emoji) is kept as sent', () => {
    const r = checkDeviceInput(
      { user_id: USER_ID, public_key: KEY, name: 'phone 📱', description: 'Ünïcödé 😀' },
      'create',
    );
    expect(r.ok && [r.value.name, r.value.description]).toEqual(['phone 📱', 'Ünïcödé 😀']);
  });
});

describe('emails', () => {
  const refused = (email: string) =>
    expect(checkEmail(email), JSON.stringify(email)).toEqual({
      ok: false,
      message: 'is invalid',
    });

  it('refuse C0 and C1 controls and DEL anywhere', () => {
    for (let cp = 0; cp <= 0x9f; cp++) {
      if (cp >= 0x20 && cp < 0x7f) continue;
      refused(`a${String.fromCodePoint(cp)}b@example.com`);
      refused(`ab@exa${String.fromCodePoint(cp)}mple.com`);
    }
  });

  it('refuse bidi controls and zero-width characters', () => {
    const hidden = [
      0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x200b, 0x200c,
      0x200d, 0x2060, 0xfeff, 0x00ad,
    ];
    for (const cp of hidden) refused(`adm${String.fromCodePoint(cp)}in@example.com`);
    // The review's spoof: shows as admin@example.com in a right-to-left context.
    refused('\u202emoc.elpmaxe@nimda');
  });

  it('refuse exactly the characters whose Unicode lower case holds an ASCII letter (U+0130, U+212A)', () => {
    const folding: number[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (/[a-z]/.test(String.fromCodePoint(cp).toLowerCase())) folding.push(cp);
    }
    expect(folding).toEqual([0x130, 0x212a]);
    for (const cp of folding) refused(`${String.fromCodePoint(cp)}aren@example.com`);
    // Why: the one email key is the Unicode lower case, in which the Kelvin sign is `k`.
    expect(userKey('\u212Aaren@example.com')).toBe('karen@example.com');
    // Characters whose *upper* case is ASCII keep their own lower case: no collision, accepted
    // (U+017F long s is refused all the same, as a compatibility form of s: email-characters.test.ts).
    expect(checkEmail('\u0131rmak@example.com').ok).toBe(true);
  });

  it('accept other non-ASCII letters, compared by their lower case', () => {
    expect(checkEmail('  Ünïcödé@Bücher.de ')).toEqual({ ok: true, email: 'Ünïcödé@Bücher.de' });
    expect(userKey('Ünïcödé@Bücher.de')).toBe('ünïcödé@bücher.de');
    expect(checkEmail('a😀@example.com').ok).toBe(true);
  });

  it('say which character is refused, for validate', () => {
    expect(characterProblemText('alice@example.com')).toBeNull();
    expect(characterProblemText('a\u0000@example.com')).toBe('it holds a NUL or a lone UTF-16 surrogate');
    expect(characterProblemText('a\ud800@example.com')).toBe('it holds a NUL or a lone UTF-16 surrogate');
    expect(characterProblemText('\u202emoc@x')).toBe('it holds the control or invisible character U+202E');
    expect(characterProblemText('a\u001b[2J@x')).toBe('it holds the control or invisible character U+001B');
    expect(characterProblemText('\u212Aaren@example.com')).toMatch(
      /^it holds U\+212A, whose lower case "k" holds an ASCII letter/,
    );
  });
});
