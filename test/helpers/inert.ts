/** What the inert-output checks share: a hostile markdown value, and where markdown may hold it. */
import { expect } from 'vitest';

/** An image and a link to a host no test owns: shown as such, it would load or link out. */
export const HOSTILE_MARKDOWN = '![x](https://evil.example/t.png)[c](https://evil.example)';

/**
 * Outside code spans and fences, no link or image of the hostile values is left. Returns the
 * fence still open at the end (null when every fence was closed).
 */
export function expectNoLinkOutsideCode(markdown: string, where: string): string | null {
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const opener = /^\s{0,3}(`{3,})/.exec(line);
    if (fence === null && opener) {
      fence = opener[1]!;
      continue;
    }
    if (fence !== null) {
      if (line.trim() === fence) fence = null;
      continue;
    }
    const outside = line.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
    expect(outside, `${where}: ${JSON.stringify(line)}`).not.toContain('evil.example');
  }
  return fence;
}
