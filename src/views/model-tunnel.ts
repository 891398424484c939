/** What is wrong with a declared tunnel network, in words (the codes are src/model/tunnel.ts's). */
import type { TunnelNetworkProblem } from '../model/tunnel.js';

export function tunnelNetworkProblemText(problem: TunnelNetworkProblem): string {
  if (problem.code === 'not_a_block')
    return `must be an IPv${problem.family} CIDR block such as ${problem.family === 4 ? '10.3.2.0/24' : 'fd00::3:2:0/120'}`;
  return `must leave room for devices (prefix at most /${problem.longest})`;
}
