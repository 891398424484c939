/** The words of netform/cdktf's own failures. */

/** The command that installs the optional peer dependencies netform/cdktf is built on. */
export const CDKTF_INSTALL = 'npm install cdktf@0.21 constructs@10';

/**
 * Why `netform/cdktf` cannot load, in one line: the packages missing, the command that installs
 * them, and that reading a synthesized stack needs neither.
 */
export function cdktfPeersMissing(missing: readonly string[]): string {
  const what =
    missing.length === 1
      ? 'an optional peer dependency of netform that is not installed'
      : 'optional peer dependencies of netform that are not installed';
  return (
    `netform/cdktf needs ${missing.join(' and ')}, ${what}: ${CDKTF_INSTALL} ` +
    '(netform validate, plan and apply read a synthesized cdk.tf.json without them)'
  );
}
