/**
 * `netform/cdktf`: CDK for Terraform constructs for the firezone provider (generated from
 * schemas/terraform-provider.json by `npm run generate:cdktf`), and FirezoneStack, which builds a
 * whole desired state from a list of users. Needs the optional peer dependencies cdktf and
 * constructs: without them, importing this entry throws one Error saying what to install.
 */
// First: it checks for cdktf and constructs before the modules below, which load them, run.
import './peers.js';
export { Device, type DeviceConfig } from './generated/providers/firezone/device/index.js';
export { FirezoneProvider, type FirezoneProviderConfig } from './generated/providers/firezone/provider/index.js';
export { Rule, type RuleConfig } from './generated/providers/firezone/rule/index.js';
export { User, type UserConfig } from './generated/providers/firezone/user/index.js';
export {
  FirezoneStack,
  terraformName,
  type FirezoneDeviceIgnorable,
  type FirezoneDeviceSpec,
  type FirezoneRole,
  type FirezoneRuleSpec,
  type FirezoneStackConfig,
  type FirezoneUserResources,
  type FirezoneUserSpec,
  type NetformAbsentSpec,
  type NetformConfigurationSpec,
  type NetformLimit,
  type NetformSettingsSpec,
  type NetformTestSpec,
  type SecretVariable,
} from './stack.js';
