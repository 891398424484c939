/**
 * Emails refuse look-alikes (security review 2026-11b, G6): characters that Unicode writes as
 * another code point (the Angstrom and Ohm signs), compatibility forms, and invisible letters (the
 * Hangul fillers), from one generated table shared by validate and the server. Upper-case and
 * precomposed letters stay valid.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TABLE_PATH, tableText } from '../../../scripts/email-table.mjs';
import { lookAlikeKind } from '../../../src/model/email-characters.js';
import { checkEmail, emailCharacterProblem } from '../../../src/model/user.js';
import { emailCharacterProblemText } from '../../../src/views/model-email.js';

/** Why an email is refused for a character, in the words validate prints (null when it is not). */
function characterProblemText(email: string): string | null {
  const problem = emailCharacterProblem(email);
  return problem && emailCharacterProblemText(problem);
}

const cp = (n: number) => String.fromCodePoint(n);

describe('the look-alike table', () => {
  it('is what scripts/email-table.mjs generates from this Node.js (regenerating gives the same file)', () => {
    expect(readFileSync(TABLE_PATH, 'utf8')).toBe(tableText());
  });

  it('holds every character NFC changes, or whose lower case NFKC changes, and no other letter', () => {
    for (let n = 0x80; n <= 0x10ffff; n++) {
      if (n >= 0xd800 && n <= 0xdfff) continue;
      const c = cp(n);
      const lower = c.toLowerCase();
      const changed = c.normalize('NFC') !== c || lower.normalize('NFKC') !== lower;
      if (changed) expect(lookAlikeKind(c), `U+${n.toString(16)}`).not.toBeNull();
      else if (/^\p{L}$/u.test(c) && !/^\p{Default_Ignorable_Code_Point}$/u.test(c) && lookAlikeKind(c) !== null)
        expect.fail(`U+${n.toString(16)} is an ordinary letter but refused`);
    }
  });

  it('refuses the review reproductions: the Angstrom sign, the Ohm sign, the Hangul fillers (G6)', () => {
    for (const email of [
      '\u212Bngstrom@example.com',
      '\u2126mega@example.com',
      'a\u3164b@example.com',
      'a\u115Fb@example.com',
      'a\u1160b@example.com',
      'a\uFFA0b@example.com',
      'a\u2800b@example.com',
      '\u212Aaren@example.com',
      '\uFF41lice@example.com', // fullwidth a
      '\u017Fam@example.com', // long s, NFKC s
      'a\u030Angstrom@example.com', // a + combining ring: the letter å in two code points
    ])
      expect(checkEmail(email), JSON.stringify(email)).toEqual({ ok: false, message: 'is invalid' });
  });

  it('keeps upper-case and precomposed letters valid', () => {
    for (const email of [
      'Grace.Hopper@Corp.Example',
      '\u00e5ngstrom@example.com',
      '\u00c5ngstrom@example.com',
      '\u03c9mega@example.com',
      '\u03a9mega@example.com',
      'Ünïcödé@Bücher.de',
      '한글@example.com',
      'a😀@example.com',
    ])
      expect(checkEmail(email), email).toEqual({ ok: true, email });
  });

  it('says which character is refused and what to write instead', () => {
    expect(characterProblemText('\u212Bngstrom@example.com')).toBe(
      'it holds U+212B, which Unicode writes as U+00C5 ("Å"), so it would name the email spelled with that: write U+00C5 instead',
    );
    expect(characterProblemText('\u2126mega@example.com')).toBe(
      'it holds U+2126, which Unicode writes as U+03A9 ("Ω"), so it would name the email spelled with that: write U+03A9 instead',
    );
    expect(characterProblemText('\uFF41lice@example.com')).toBe(
      'it holds U+FF41, a compatibility form of "a", so it would look like the email spelled with that: write "a" instead',
    );
    expect(characterProblemText('a\u3164b@example.com')).toBe('it holds the invisible character U+3164');
    expect(characterProblemText('a\u030Angstrom@example.com')).toMatch(/not in Unicode normal form NFC/);
  });
});
