/**
 * cdktf and constructs are optional peer dependencies of netform: only netform/cdktf needs them,
 * and reading a synthesized `cdk.tf.json` does not. This module is netform/cdktf's first import,
 * so that without them the entry throws one Error saying what to install before any module that
 * needs them loads. cdktf is loaded here with `require` (it is CommonJS, as are the generated
 * bindings), not with a static import, which Node resolves before any of the entry's code runs.
 */
import { createRequire } from 'node:module';
import type * as Cdktf from 'cdktf';
import { cdktfPeersMissing } from '../views/cdktf.js';

const require = createRequire(import.meta.url);

/** The peer dependencies this entry cannot resolve from where netform is installed. */
function missingPeers(): string[] {
  return ['cdktf', 'constructs'].filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

const missing = missingPeers();
if (missing.length > 0) throw new Error(cdktfPeersMissing(missing));

const cdktf = require('cdktf') as typeof Cdktf;

export const TerraformStack = cdktf.TerraformStack;
export const TerraformVariable = cdktf.TerraformVariable;
export type TerraformVariable = Cdktf.TerraformVariable;
