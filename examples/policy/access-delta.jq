# An access policy on netform's access delta (schemas/access-delta.schema.json), for Debian's jq
# (1.6 and later). Input: `netform plan --format json` (its `access_delta`), a saved plan, or
# `netform check no-new-access --format json`. Prints "access policy: pass" and exits 0, or prints
# each violation on stderr and exits 1:
#
#   netform plan -f desired/ --base origin/main --format json > plan.json
#   jq -r --argjson max_users 3 -f examples/policy/access-delta.jq plan.json
#
# The delta's version 2 states each list of regions once, in `region_sets`: an entry's `gained`
# and `lost` are indexes into it (`$delta.region_sets[$e.gained[]][]` is every region it gains).
# A delta of another version stops the policy (exit 5) rather than reading it wrongly.
#
# The rules (change them to your own):
#   1. nobody becomes an admin;
#   2. at most $max_users users gain access in one change;
#   3. an existing device gains no protocol-wide access (a rule without ports: every protocol and port);
#   4. an existing device gains nothing because a drop rule was removed (no rule decides it after).

def where_text: if .file then " (\(.file):\(.line))" elif .id then " (rule id \(.id))" else "" end;
def what:
  (if .protocol == "all" then "every protocol and port" elif .protocol == "other" then "protocols without ports"
   else "\(.protocol) \(.ports)" end) + " to \(.addresses | join(", "))";

(.access_delta // .) as $delta
| if $delta.version != 2 then error("access policy: access_delta version \($delta.version), this policy reads version 2") else . end
| ($ARGS.named.max_users // 3) as $max
| [
    ($delta.blast_radius.admins_gained[] | "\(.) becomes an admin"),
    (if $delta.blast_radius.gained.users > $max
     then "\($delta.blast_radius.gained.users) users gain access (at most \($max) in one change)"
     else empty end),
    ($delta.entries[] as $e
     | $delta.region_sets[$e.gained[]][]
     | select($e.tunnel[.family | tostring] == "kept")
     | (select(.protocol == "all" and .after != null)
        | "\($e.user) (\($e.devices | join(", "))) gains \(what) by accept \(.after.destination)\(.after | where_text)"),
       (select(.after == null)
        | "\($e.user) (\($e.devices | join(", "))) gains \(what): no rule decides it once the drop \(.before.destination // "")\(.before // {} | where_text) is gone")
    )
  ]
| if length == 0 then "access policy: pass"
  else (map("access policy: " + .) | join("\n") + "\n" | halt_error(1)) end
