/** What the repository owns (`settings.manage`) and what it never deletes (`settings.protect`). */
import { emailGlobMatcher } from '../model/email-glob.js';
import { cidrContains, parseCidrOrAddress, type ParsedCidr } from '../model/net.js';
import type { DesiredSettings } from '../model/state.js';

export interface Scope {
  /** A user, and with it its devices and user-bound rules, is inside `manage.users`. */
  managesUser(email: string): boolean;
  /** A global rule's destination lies inside one of `manage.rules`. */
  managesGlobalRule(destination: string): boolean;
  isProtected(email: string): boolean;
}

export function buildScope(settings: DesiredSettings): Scope {
  const userGlobs = settings.manage.users;
  // One matcher (model/email-glob.ts) for both, and for validate: an email is in a scope or not.
  const managesUser = userGlobs === null ? () => true : emailGlobMatcher(userGlobs);
  const ruleBlocks =
    settings.manage.rules?.map((c) => parseCidrOrAddress(c)).filter((c): c is ParsedCidr => c !== null) ?? null;
  const managesGlobalRule =
    ruleBlocks === null
      ? () => true
      : (destination: string) => {
          const parsed = parseCidrOrAddress(destination);
          return parsed !== null && ruleBlocks.some((block) => cidrContains(block, parsed));
        };
  return { managesUser, managesGlobalRule, isProtected: emailGlobMatcher(settings.protect.users) };
}
