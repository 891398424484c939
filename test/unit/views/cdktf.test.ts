import { describe, expect, it } from 'vitest';
import { cdktfPeersMissing } from '../../../src/views/cdktf.js';

describe('netform/cdktf without its peer dependencies', () => {
  it('says in one line which are missing and the command that installs them', () => {
    expect(cdktfPeersMissing(['cdktf', 'constructs'])).toBe(
      'netform/cdktf needs cdktf and constructs, optional peer dependencies of netform that are not installed: ' +
        'npm install cdktf@0.21 constructs@10 (netform validate, plan and apply read a synthesized cdk.tf.json without them)',
    );
    expect(cdktfPeersMissing(['constructs'])).toBe(
      'netform/cdktf needs constructs, an optional peer dependency of netform that is not installed: ' +
        'npm install cdktf@0.21 constructs@10 (netform validate, plan and apply read a synthesized cdk.tf.json without them)',
    );
  });
});
