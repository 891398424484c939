// https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface DeviceConfig extends cdktf.TerraformMetaArguments {
  /**
  * IP addresses or CIDR blocks routed through the tunnel. Giving a value implies use_default_allowed_ips = false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#allowed_ips Device#allowed_ips}
  */
  readonly allowedIps?: string[];
  /**
  * Free text, at most 2048 characters.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#description Device#description}
  */
  readonly description?: string;
  /**
  * DNS servers: IP addresses or host names. Giving a value implies use_default_dns = false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#dns Device#dns}
  */
  readonly dns?: string[];
  /**
  * host, host:port, IPv4:port, bare IPv6 or [IPv6]:port. Giving a value implies use_default_endpoint = false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#endpoint Device#endpoint}
  */
  readonly endpoint?: string;
  /**
  * Tunnel IPv4 address; the server assigns the lowest free one when omitted.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#ipv4 Device#ipv4}
  */
  readonly ipv4?: string;
  /**
  * Tunnel IPv6 address; the server assigns the lowest free one when omitted.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#ipv6 Device#ipv6}
  */
  readonly ipv6?: string;
  /**
  * MTU, 576 to 1500. Giving a value implies use_default_mtu = false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#mtu Device#mtu}
  */
  readonly mtu?: number;
  /**
  * Device name, unique per user, 1 to 255 characters.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#name Device#name}
  */
  readonly name: string;
  /**
  * Persistent keepalive in seconds, 0 to 120. Giving a value implies use_default_persistent_keepalive = false.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#persistent_keepalive Device#persistent_keepalive}
  */
  readonly persistentKeepalive?: number;
  /**
  * WireGuard preshared key (base64 of 32 bytes); the server generates one when omitted.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#preshared_key Device#preshared_key}
  */
  readonly presharedKey?: string;
  /**
  * WireGuard public key of the device (base64 of 32 bytes).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#public_key Device#public_key}
  */
  readonly publicKey: string;
  /**
  * Use the server's default allowed_ips.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#use_default_allowed_ips Device#use_default_allowed_ips}
  */
  readonly useDefaultAllowedIps?: boolean | cdktf.IResolvable;
  /**
  * Use the server's default dns.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#use_default_dns Device#use_default_dns}
  */
  readonly useDefaultDns?: boolean | cdktf.IResolvable;
  /**
  * Use the server's default endpoint.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#use_default_endpoint Device#use_default_endpoint}
  */
  readonly useDefaultEndpoint?: boolean | cdktf.IResolvable;
  /**
  * Use the server's default mtu.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#use_default_mtu Device#use_default_mtu}
  */
  readonly useDefaultMtu?: boolean | cdktf.IResolvable;
  /**
  * Use the server's default persistent_keepalive.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#use_default_persistent_keepalive Device#use_default_persistent_keepalive}
  */
  readonly useDefaultPersistentKeepalive?: boolean | cdktf.IResolvable;
  /**
  * Owner: the id of a firezone_user.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#user_id Device#user_id}
  */
  readonly userId: string;
}

/**
* Represents a {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device firezone_device}
*/
export class Device extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "firezone_device";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a Device resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the Device to import
  * @param importFromId The id of the existing Device that should be imported. Refer to the {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the Device to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "firezone_device", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/device firezone_device} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options DeviceConfig
  */
  public constructor(scope: Construct, id: string, config: DeviceConfig) {
    super(scope, id, {
      terraformResourceType: 'firezone_device',
      terraformGeneratorMetadata: {
        providerName: 'firezone'
      },
      provider: config.provider,
      dependsOn: config.dependsOn,
      count: config.count,
      lifecycle: config.lifecycle,
      provisioners: config.provisioners,
      connection: config.connection,
      forEach: config.forEach
    });
    this._allowedIps = config.allowedIps;
    this._description = config.description;
    this._dns = config.dns;
    this._endpoint = config.endpoint;
    this._ipv4 = config.ipv4;
    this._ipv6 = config.ipv6;
    this._mtu = config.mtu;
    this._name = config.name;
    this._persistentKeepalive = config.persistentKeepalive;
    this._presharedKey = config.presharedKey;
    this._publicKey = config.publicKey;
    this._useDefaultAllowedIps = config.useDefaultAllowedIps;
    this._useDefaultDns = config.useDefaultDns;
    this._useDefaultEndpoint = config.useDefaultEndpoint;
    this._useDefaultMtu = config.useDefaultMtu;
    this._useDefaultPersistentKeepalive = config.useDefaultPersistentKeepalive;
    this._userId = config.userId;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // allowed_ips - computed: true, optional: true, required: false
  private _allowedIps?: string[]; 
  public get allowedIps() {
    return this.getListAttribute('allowed_ips');
  }
  public set allowedIps(value: string[]) {
    this._allowedIps = value;
  }
  public resetAllowedIps() {
    this._allowedIps = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get allowedIpsInput() {
    return this._allowedIps;
  }

  // description - computed: false, optional: true, required: false
  private _description?: string; 
  public get description() {
    return this.getStringAttribute('description');
  }
  public set description(value: string) {
    this._description = value;
  }
  public resetDescription() {
    this._description = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get descriptionInput() {
    return this._description;
  }

  // dns - computed: true, optional: true, required: false
  private _dns?: string[]; 
  public get dns() {
    return this.getListAttribute('dns');
  }
  public set dns(value: string[]) {
    this._dns = value;
  }
  public resetDns() {
    this._dns = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get dnsInput() {
    return this._dns;
  }

  // endpoint - computed: true, optional: true, required: false
  private _endpoint?: string; 
  public get endpoint() {
    return this.getStringAttribute('endpoint');
  }
  public set endpoint(value: string) {
    this._endpoint = value;
  }
  public resetEndpoint() {
    this._endpoint = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get endpointInput() {
    return this._endpoint;
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // inserted_at - computed: true, optional: false, required: false
  public get insertedAt() {
    return this.getStringAttribute('inserted_at');
  }

  // ipv4 - computed: true, optional: true, required: false
  private _ipv4?: string; 
  public get ipv4() {
    return this.getStringAttribute('ipv4');
  }
  public set ipv4(value: string) {
    this._ipv4 = value;
  }
  public resetIpv4() {
    this._ipv4 = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get ipv4Input() {
    return this._ipv4;
  }

  // ipv6 - computed: true, optional: true, required: false
  private _ipv6?: string; 
  public get ipv6() {
    return this.getStringAttribute('ipv6');
  }
  public set ipv6(value: string) {
    this._ipv6 = value;
  }
  public resetIpv6() {
    this._ipv6 = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get ipv6Input() {
    return this._ipv6;
  }

  // latest_handshake - computed: true, optional: false, required: false
  public get latestHandshake() {
    return this.getStringAttribute('latest_handshake');
  }

  // mtu - computed: true, optional: true, required: false
  private _mtu?: number; 
  public get mtu() {
    return this.getNumberAttribute('mtu');
  }
  public set mtu(value: number) {
    this._mtu = value;
  }
  public resetMtu() {
    this._mtu = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get mtuInput() {
    return this._mtu;
  }

  // name - computed: false, optional: false, required: true
  private _name?: string; 
  public get name() {
    return this.getStringAttribute('name');
  }
  public set name(value: string) {
    this._name = value;
  }
  // Temporarily expose input value. Use with caution.
  public get nameInput() {
    return this._name;
  }

  // persistent_keepalive - computed: true, optional: true, required: false
  private _persistentKeepalive?: number; 
  public get persistentKeepalive() {
    return this.getNumberAttribute('persistent_keepalive');
  }
  public set persistentKeepalive(value: number) {
    this._persistentKeepalive = value;
  }
  public resetPersistentKeepalive() {
    this._persistentKeepalive = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get persistentKeepaliveInput() {
    return this._persistentKeepalive;
  }

  // preshared_key - computed: true, optional: true, required: false
  private _presharedKey?: string; 
  public get presharedKey() {
    return this.getStringAttribute('preshared_key');
  }
  public set presharedKey(value: string) {
    this._presharedKey = value;
  }
  public resetPresharedKey() {
    this._presharedKey = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get presharedKeyInput() {
    return this._presharedKey;
  }

  // public_key - computed: false, optional: false, required: true
  private _publicKey?: string; 
  public get publicKey() {
    return this.getStringAttribute('public_key');
  }
  public set publicKey(value: string) {
    this._publicKey = value;
  }
  // Temporarily expose input value. Use with caution.
  public get publicKeyInput() {
    return this._publicKey;
  }

  // remote_ip - computed: true, optional: false, required: false
  public get remoteIp() {
    return this.getStringAttribute('remote_ip');
  }

  // rx_bytes - computed: true, optional: false, required: false
  public get rxBytes() {
    return this.getNumberAttribute('rx_bytes');
  }

  // server_public_key - computed: true, optional: false, required: false
  public get serverPublicKey() {
    return this.getStringAttribute('server_public_key');
  }

  // tx_bytes - computed: true, optional: false, required: false
  public get txBytes() {
    return this.getNumberAttribute('tx_bytes');
  }

  // updated_at - computed: true, optional: false, required: false
  public get updatedAt() {
    return this.getStringAttribute('updated_at');
  }

  // use_default_allowed_ips - computed: true, optional: true, required: false
  private _useDefaultAllowedIps?: boolean | cdktf.IResolvable; 
  public get useDefaultAllowedIps() {
    return this.getBooleanAttribute('use_default_allowed_ips');
  }
  public set useDefaultAllowedIps(value: boolean | cdktf.IResolvable) {
    this._useDefaultAllowedIps = value;
  }
  public resetUseDefaultAllowedIps() {
    this._useDefaultAllowedIps = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get useDefaultAllowedIpsInput() {
    return this._useDefaultAllowedIps;
  }

  // use_default_dns - computed: true, optional: true, required: false
  private _useDefaultDns?: boolean | cdktf.IResolvable; 
  public get useDefaultDns() {
    return this.getBooleanAttribute('use_default_dns');
  }
  public set useDefaultDns(value: boolean | cdktf.IResolvable) {
    this._useDefaultDns = value;
  }
  public resetUseDefaultDns() {
    this._useDefaultDns = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get useDefaultDnsInput() {
    return this._useDefaultDns;
  }

  // use_default_endpoint - computed: true, optional: true, required: false
  private _useDefaultEndpoint?: boolean | cdktf.IResolvable; 
  public get useDefaultEndpoint() {
    return this.getBooleanAttribute('use_default_endpoint');
  }
  public set useDefaultEndpoint(value: boolean | cdktf.IResolvable) {
    this._useDefaultEndpoint = value;
  }
  public resetUseDefaultEndpoint() {
    this._useDefaultEndpoint = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get useDefaultEndpointInput() {
    return this._useDefaultEndpoint;
  }

  // use_default_mtu - computed: true, optional: true, required: false
  private _useDefaultMtu?: boolean | cdktf.IResolvable; 
  public get useDefaultMtu() {
    return this.getBooleanAttribute('use_default_mtu');
  }
  public set useDefaultMtu(value: boolean | cdktf.IResolvable) {
    this._useDefaultMtu = value;
  }
  public resetUseDefaultMtu() {
    this._useDefaultMtu = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get useDefaultMtuInput() {
    return this._useDefaultMtu;
  }

  // use_default_persistent_keepalive - computed: true, optional: true, required: false
  private _useDefaultPersistentKeepalive?: boolean | cdktf.IResolvable; 
  public get useDefaultPersistentKeepalive() {
    return this.getBooleanAttribute('use_default_persistent_keepalive');
  }
  public set useDefaultPersistentKeepalive(value: boolean | cdktf.IResolvable) {
    this._useDefaultPersistentKeepalive = value;
  }
  public resetUseDefaultPersistentKeepalive() {
    this._useDefaultPersistentKeepalive = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get useDefaultPersistentKeepaliveInput() {
    return this._useDefaultPersistentKeepalive;
  }

  // user_id - computed: false, optional: false, required: true
  private _userId?: string; 
  public get userId() {
    return this.getStringAttribute('user_id');
  }
  public set userId(value: string) {
    this._userId = value;
  }
  // Temporarily expose input value. Use with caution.
  public get userIdInput() {
    return this._userId;
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      allowed_ips: cdktf.listMapper(cdktf.stringToTerraform, false)(this._allowedIps),
      description: cdktf.stringToTerraform(this._description),
      dns: cdktf.listMapper(cdktf.stringToTerraform, false)(this._dns),
      endpoint: cdktf.stringToTerraform(this._endpoint),
      ipv4: cdktf.stringToTerraform(this._ipv4),
      ipv6: cdktf.stringToTerraform(this._ipv6),
      mtu: cdktf.numberToTerraform(this._mtu),
      name: cdktf.stringToTerraform(this._name),
      persistent_keepalive: cdktf.numberToTerraform(this._persistentKeepalive),
      preshared_key: cdktf.stringToTerraform(this._presharedKey),
      public_key: cdktf.stringToTerraform(this._publicKey),
      use_default_allowed_ips: cdktf.booleanToTerraform(this._useDefaultAllowedIps),
      use_default_dns: cdktf.booleanToTerraform(this._useDefaultDns),
      use_default_endpoint: cdktf.booleanToTerraform(this._useDefaultEndpoint),
      use_default_mtu: cdktf.booleanToTerraform(this._useDefaultMtu),
      use_default_persistent_keepalive: cdktf.booleanToTerraform(this._useDefaultPersistentKeepalive),
      user_id: cdktf.stringToTerraform(this._userId),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      allowed_ips: {
        value: cdktf.listMapperHcl(cdktf.stringToHclTerraform, false)(this._allowedIps),
        isBlock: false,
        type: "list",
        storageClassType: "stringList",
      },
      description: {
        value: cdktf.stringToHclTerraform(this._description),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      dns: {
        value: cdktf.listMapperHcl(cdktf.stringToHclTerraform, false)(this._dns),
        isBlock: false,
        type: "list",
        storageClassType: "stringList",
      },
      endpoint: {
        value: cdktf.stringToHclTerraform(this._endpoint),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      ipv4: {
        value: cdktf.stringToHclTerraform(this._ipv4),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      ipv6: {
        value: cdktf.stringToHclTerraform(this._ipv6),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      mtu: {
        value: cdktf.numberToHclTerraform(this._mtu),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      name: {
        value: cdktf.stringToHclTerraform(this._name),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      persistent_keepalive: {
        value: cdktf.numberToHclTerraform(this._persistentKeepalive),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      preshared_key: {
        value: cdktf.stringToHclTerraform(this._presharedKey),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      public_key: {
        value: cdktf.stringToHclTerraform(this._publicKey),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      use_default_allowed_ips: {
        value: cdktf.booleanToHclTerraform(this._useDefaultAllowedIps),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      use_default_dns: {
        value: cdktf.booleanToHclTerraform(this._useDefaultDns),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      use_default_endpoint: {
        value: cdktf.booleanToHclTerraform(this._useDefaultEndpoint),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      use_default_mtu: {
        value: cdktf.booleanToHclTerraform(this._useDefaultMtu),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      use_default_persistent_keepalive: {
        value: cdktf.booleanToHclTerraform(this._useDefaultPersistentKeepalive),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      user_id: {
        value: cdktf.stringToHclTerraform(this._userId),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
