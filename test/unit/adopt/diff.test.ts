import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../src/desired/adopt/diff.js';

describe('unifiedDiff', () => {
  it('is empty for equal texts, and a hunk with three lines of context otherwise', () => {
    expect(unifiedDiff('a\n', 'a\n', 'a/x', 'b/x')).toBe('');
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9', ''].join('\n');
    const after = before.replace('5\n', 'five\n');
    expect(unifiedDiff(before, after, 'a/x', 'b/x')).toBe(
      '--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n',
    );
  });

  it('patch(1) turns the first text into the second with it (random texts)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'netform-diff-'));
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    try {
      for (let t = 0; t < 30; t++) {
        const a = Array.from({ length: Math.floor(random() * 30) }, () => `l${Math.floor(random() * 6)}`);
        const b = a.filter(() => random() > 0.15).map((l) => (random() < 0.1 ? `x${l}` : l));
        if (random() < 0.5) b.splice(Math.floor(random() * b.length), 0, 'new');
        const A = a.length ? `${a.join('\n')}\n` : '';
        const B = b.length ? `${b.join('\n')}\n` : '';
        const diff = unifiedDiff(A, B, 'a', 'b');
        if (diff === '') {
          expect(A).toBe(B);
          continue;
        }
        writeFileSync(join(dir, 'file'), A);
        writeFileSync(join(dir, 'patch'), diff);
        execFileSync('patch', ['-s', join(dir, 'file'), join(dir, 'patch')]);
        expect(readFileSync(join(dir, 'file'), 'utf8')).toBe(B);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
