/** Why an email or an email glob is refused, in words (the codes are src/model/user.ts's and src/model/email-glob.ts's). */
import type { EmailGlobProblem } from '../model/email-glob.js';
import type { EmailCharacterProblem } from '../model/user.js';

export function emailGlobProblemText(problem: EmailGlobProblem): string {
  if (problem.code === 'too_long')
    return `is ${problem.length} characters long, more than the ${problem.max} a glob may hold`;
  return `has the range ${problem.low}-${problem.high}, whose ends are in the wrong order`;
}

/** `U+212A`: a character by its code point. */
const at = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
const atEach = (text: string) => Array.from(text, at).join(' ');

/** Why an email is refused for a character it holds, in words (the codes are src/model/user.ts's). */
export function emailCharacterProblemText(problem: EmailCharacterProblem): string {
  switch (problem.code) {
    case 'nul_or_surrogate':
      return 'it holds a NUL or a lone UTF-16 surrogate';
    case 'hidden':
      return `it holds the control or invisible character ${at(problem.char)}`;
    case 'ascii_folding':
      return `it holds ${at(problem.char)}, whose lower case ${JSON.stringify(problem.char.toLowerCase())} holds an ASCII letter, so it would name the email spelled with that letter: write the ASCII letter instead`;
    case 'composed': {
      const same = problem.char.normalize('NFC');
      return `it holds ${at(problem.char)}, which Unicode writes as ${atEach(same)} (${JSON.stringify(same)}), so it would name the email spelled with that: write ${atEach(same)} instead`;
    }
    case 'compatibility': {
      const plain = problem.char.toLowerCase().normalize('NFKC');
      return `it holds ${at(problem.char)}, a compatibility form of ${JSON.stringify(plain)}, so it would look like the email spelled with that: write ${JSON.stringify(plain)} instead`;
    }
    case 'invisible':
      return `it holds the invisible character ${at(problem.char)}`;
    case 'not_nfc':
      return 'it holds a letter written as a letter and a combining mark, which a single letter stands for (it is not in Unicode normal form NFC): write the single letter';
  }
}
