/** The one email-glob matcher of `manage.users`, `protect.users` and validate: emails are strings, not paths. */
import { describe, expect, it } from 'vitest';
import { emailGlobMatcher, emailGlobProblem } from '../../../src/model/email-glob.js';
import { emailGlobProblemText } from '../../../src/views/model-email.js';
import { buildScope } from '../../../src/plan/scope.js';
import { defaultSettings } from '../../../src/model/state.js';

const matches = (glob: string, email: string): boolean => emailGlobMatcher([glob])(email);

describe('email globs', () => {
  it('`*` matches any run of characters, `/` included (F3: no invisible ops/backdoor@example.com)', () => {
    expect(matches('*@example.com', 'ops/backdoor@example.com')).toBe(true);
    expect(matches('*@example.com', 'a/b/c@example.com')).toBe(true);
    expect(matches('*@example.com', 'alice@sub.example.com')).toBe(false);
    expect(matches('*@*example.com', 'alice@sub.example.com')).toBe(true);
    expect(matches('*@example.com', 'alice@example.org')).toBe(false);
    expect(matches('ops-*@example.com', 'ops-x/y@example.com')).toBe(true);
    expect(matches('**@example.com', '.hidden@example.com')).toBe(true);
    expect(matches('*', 'anything/at@all')).toBe(true);
  });

  it('matches case-insensitively, both ways', () => {
    expect(matches('*@example.com', 'Alice@Example.COM')).toBe(true);
    expect(matches('ALICE@EXAMPLE.COM', 'alice@example.com')).toBe(true);
    expect(matches('[A-C]*@x.com', 'bob@x.com')).toBe(true);
  });

  it('supports ?, [...], [!...], {a,b} and \\ escapes; every other character is itself', () => {
    expect(matches('?@x.com', 'a@x.com')).toBe(true);
    expect(matches('?@x.com', 'ab@x.com')).toBe(false);
    expect(matches('?@x.com', '😀@x.com')).toBe(true);
    expect(matches('[a-c]*@x.com', 'bob@x.com')).toBe(true);
    expect(matches('[!a-c]*@x.com', 'bob@x.com')).toBe(false);
    expect(matches('[^a-c]*@x.com', 'dan@x.com')).toBe(true);
    expect(matches('[]a]@x', ']@x')).toBe(true);
    expect(matches('[a-]@x', '-@x')).toBe(true);
    expect(matches('{alice,bob}@x.com', 'bob@x.com')).toBe(true);
    expect(matches('{alice,bob}@x.com', 'carol@x.com')).toBe(false);
    expect(matches('{a{b,c},d}@x.com', 'ac@x.com')).toBe(true);
    expect(matches('{a{b,c},d}@x.com', 'd@x.com')).toBe(true);
    expect(matches('\\*@x.com', '*@x.com')).toBe(true);
    expect(matches('\\*@x.com', 'a@x.com')).toBe(false);
    // Unclosed groups, and braces without a comma, are ordinary characters.
    expect(matches('{abc}@x.com', '{abc}@x.com')).toBe(true);
    expect(matches('[abc@x.com', '[abc@x.com')).toBe(true);
    expect(matches('{a,b@x.com', '{a,b@x.com')).toBe(true);
    // Regular-expression and extglob characters are plain, and there is no negation.
    expect(matches('a.b@x.com', 'axb@x.com')).toBe(false);
    expect(matches('(a|b)+@x.com', '(a|b)+@x.com')).toBe(true);
    expect(matches('!*@x.com', 'a@x.com')).toBe(false);
    expect(matches('!*@x.com', '!a@x.com')).toBe(true);
    expect(matches('a$^@x', 'a$^@x')).toBe(true);
  });

  it('reports a reversed range, and blank globs match nothing', () => {
    expect(emailGlobProblem('[z-a]@x.com')).toEqual({ code: 'range_reversed', low: 'z', high: 'a' });
    expect(emailGlobProblemText(emailGlobProblem('[z-a]@x.com')!)).toBe(
      'has the range z-a, whose ends are in the wrong order',
    );
    expect(emailGlobProblem('*@x.com')).toBeNull();
    expect(emailGlobMatcher([])('a@x.com')).toBe(false);
    expect(emailGlobMatcher(['  '])('a@x.com')).toBe(false);
  });

  it('decides manage and protect alike: a user is inside a scope or outside it', () => {
    const settings = defaultSettings();
    settings.manage.users = ['*@example.com'];
    settings.protect.users = ['*@example.com'];
    const scope = buildScope(settings);
    for (const email of ['ops/backdoor@example.com', 'a@example.com', 'x/y/z@EXAMPLE.com']) {
      expect(scope.managesUser(email), email).toBe(true);
      expect(scope.isProtected(email), email).toBe(true);
    }
    expect(scope.managesUser('ops/backdoor@example.org')).toBe(false);
  });
});
