// https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface UserConfig extends cdktf.TerraformMetaArguments {
  /**
  * Email address; the natural key of the user.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user#email User#email}
  */
  readonly email: string;
  /**
  * Password, 12 to 64 characters; write-only (sent on create). Pass it through a sensitive variable.
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user#password User#password}
  */
  readonly password?: string;
  /**
  * admin or unprivileged; omitted: not managed (created unprivileged).
  *
  * Docs at Terraform Registry: {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user#role User#role}
  */
  readonly role?: string;
}

/**
* Represents a {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user firezone_user}
*/
export class User extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "firezone_user";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a User resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the User to import
  * @param importFromId The id of the existing User that should be imported. Refer to the {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the User to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "firezone_user", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://registry.terraform.io/providers/jindrichskupa/firezone/latest/docs/resources/user firezone_user} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options UserConfig
  */
  public constructor(scope: Construct, id: string, config: UserConfig) {
    super(scope, id, {
      terraformResourceType: 'firezone_user',
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
    this._email = config.email;
    this._password = config.password;
    this._role = config.role;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // disabled_at - computed: true, optional: false, required: false
  public get disabledAt() {
    return this.getStringAttribute('disabled_at');
  }

  // email - computed: false, optional: false, required: true
  private _email?: string; 
  public get email() {
    return this.getStringAttribute('email');
  }
  public set email(value: string) {
    this._email = value;
  }
  // Temporarily expose input value. Use with caution.
  public get emailInput() {
    return this._email;
  }

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // inserted_at - computed: true, optional: false, required: false
  public get insertedAt() {
    return this.getStringAttribute('inserted_at');
  }

  // last_signed_in_at - computed: true, optional: false, required: false
  public get lastSignedInAt() {
    return this.getStringAttribute('last_signed_in_at');
  }

  // last_signed_in_method - computed: true, optional: false, required: false
  public get lastSignedInMethod() {
    return this.getStringAttribute('last_signed_in_method');
  }

  // password - computed: false, optional: true, required: false
  private _password?: string; 
  public get password() {
    return this.getStringAttribute('password');
  }
  public set password(value: string) {
    this._password = value;
  }
  public resetPassword() {
    this._password = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get passwordInput() {
    return this._password;
  }

  // role - computed: false, optional: true, required: false
  private _role?: string; 
  public get role() {
    return this.getStringAttribute('role');
  }
  public set role(value: string) {
    this._role = value;
  }
  public resetRole() {
    this._role = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get roleInput() {
    return this._role;
  }

  // updated_at - computed: true, optional: false, required: false
  public get updatedAt() {
    return this.getStringAttribute('updated_at');
  }

  // =========
  // SYNTHESIS
  // =========

  protected override synthesizeAttributes(): { [name: string]: any } {
    return {
      email: cdktf.stringToTerraform(this._email),
      password: cdktf.stringToTerraform(this._password),
      role: cdktf.stringToTerraform(this._role),
    };
  }

  protected override synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      email: {
        value: cdktf.stringToHclTerraform(this._email),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      password: {
        value: cdktf.stringToHclTerraform(this._password),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      role: {
        value: cdktf.stringToHclTerraform(this._role),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
