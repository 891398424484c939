/**
 * Why `apply --reviewed` withholds a change, in words: the reason's code and its detail
 * (src/plan/reviewed.ts) as the apply log and the kept plan show them.
 */
import type { WithheldChange, WithheldDetail, WithheldReason } from '../plan/reviewed.js';

const REASON_WORDS: Record<WithheldReason, string> = {
  not_reviewed: 'not in the reviewed plan',
  changed: 'changed since review',
  no_longer_holds: 'the reviewed change no longer holds',
  depends_on_withheld: 'depends on a withheld change',
  needs_approval: 'approval needed',
  expired_since_review: 'expired since review',
};

export function withheldReasonText(reason: WithheldReason): string {
  return REASON_WORDS[reason];
}

export function withheldDetailText(detail: WithheldDetail): string {
  switch (detail.code) {
    case 'action':
      return `reviewed: ${detail.reviewed}; now: ${detail.now}`;
    case 'fields':
      return `differs in ${detail.fields.join(', ')}`;
    case 'secret_source':
      return `its ${detail.field} is read from ${detail.source}, ${detail.reviewedSource !== null ? `not ${detail.reviewedSource} as reviewed` : 'and the reviewed plan sends none'}`;
    case 'secret_not_compared':
      return `the value of ${detail.source} could not be compared with the reviewed one`;
    case 'secret_value':
      return `the value of ${detail.source} is not the reviewed one`;
    case 'cascade':
      return 'what goes with it is not what was reviewed';
    case 'request':
      return 'its request is not the reviewed one';
    case 'live_changed':
      return `${detail.label} changed on the server since review`;
    case 'cascade_live_changed':
      return 'what goes with it changed on the server since review';
    case 'expired':
      return `expired ${detail.expires}`;
    case 'needs':
      return `needs ${detail.changes.join(', ')}`;
    case 'approval_from':
      return `from ${detail.owners.join(', ')}`;
  }
}

/** `changed since review (differs in mtu)` */
export function withheldText({ reason, detail }: Pick<WithheldChange, 'reason' | 'detail'>): string {
  return `${withheldReasonText(reason)}${detail ? ` (${withheldDetailText(detail)})` : ''}`;
}

/** Why an undeclared object `apply --reviewed` would have deleted stays. */
export function withheldDeletionText(reason: WithheldReason): string {
  return `its deletion is withheld: ${withheldReasonText(reason)}`;
}
