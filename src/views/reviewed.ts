/**
 * What `apply --reviewed` did not write: the withheld changes, each with its reason and the lines
 * a plan shows for it, and the reviewed changes no longer needed. Pure functions of the data.
 */
import pc from 'picocolors';
import type { ReviewedIntersection, WithheldReason } from '../plan/reviewed.js';
import { changeLines, type RenderOptions } from './plan.js';
import { inertText } from './escape.js';
import { withheldText } from './withheld.js';

export function withheldCount(count: number): string {
  return count === 1 ? '1 change' : `${count} changes`;
}

/** The withheld changes in text (empty when none), for the log before any write. */
export function renderWithheld(result: ReviewedIntersection, options: RenderOptions): string {
  const c = pc.createColors(options.color);
  const out: string[] = [];
  if (result.withheld.length > 0) {
    const n = result.withheld.length;
    const needsApproval: WithheldReason = 'needs_approval';
    const approvals = result.withheld.some((w) => w.reason === needsApproval);
    const also = approvals ? `, or that ${n === 1 ? 'needs' : 'need'} an approval (settings.owners)` : '';
    out.push(
      c.bold(
        c.yellow(
          `Withheld, not applied: ${withheldCount(n)} that the reviewed plan does not show as ${n === 1 ? 'it is' : 'they are'} now${also}:`,
        ),
      ),
    );
    for (const withheld of result.withheld) {
      const { head, details } = changeLines(withheld.change);
      out.push(c.yellow(`  ${head}`), `      withheld: ${inertText(withheldText(withheld))}`);
      for (const d of details) out.push(`      ${d}`);
    }
    out.push('');
  }
  if (result.notNeeded.length > 0) {
    const labels = result.notNeeded.map((ch) => inertText(ch.label));
    out.push(
      `Reviewed but not needed now (the server already matches, or the merged files no longer ask for it): ${labels.join(', ')}`,
      '',
    );
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}
