/** The summary of an apply: what was done, what failed and why, what was not attempted. */
import pc from 'picocolors';
import type { ApplySummary, ChangeStatus } from '../apply/executor.js';
import type { RenderOptions } from './index.js';
import { inertText } from './escape.js';

const SYMBOL = { create: '+', update: '~', delete: '-', replace: '-/+' } as const;

export function renderApplySummary(summary: ApplySummary, options: RenderOptions): string {
  const c = pc.createColors(options.color);
  const paint: Record<ChangeStatus, (s: string) => string> = { done: c.green, failed: c.red, not_attempted: c.yellow };
  const word: Record<ChangeStatus, string> = { done: 'done', failed: 'FAILED', not_attempted: 'not attempted' };
  const out: string[] = [];
  for (const r of summary.results) {
    const line = inertText(
      `${word[r.status].padEnd(13)} ${SYMBOL[r.action]} ${r.label}${r.message ? `: ${r.message}` : ''}`,
    );
    out.push(paint[r.status](line));
  }
  out.push('');
  out.push(c.bold(applySummaryLine(summary)));
  return `${out.join('\n')}\n`;
}

export function applySummaryLine(summary: ApplySummary): string {
  return `Apply: ${summary.done} done, ${summary.failed} failed, ${summary.notAttempted} not attempted.`;
}
