# NOT RUN IN CI: the same policy as access-delta.jq (which CI runs on real plans), for Open Policy
# Agent / conftest users, written for OPA 0.59+ (`import rego.v1`). Input: `netform plan --format
# json` (its `access_delta`), a saved plan, or `netform check no-new-access --format json`.
#
#   opa eval -d examples/policy/access-delta.rego -i plan.json 'data.netform.access.deny'
#   conftest test --policy examples/policy --namespace netform.access plan.json
package netform.access

import rego.v1

max_users := 3

delta := input.access_delta

# Version 2 states each list of regions once, in `region_sets`; an entry's `gained` holds indexes into it.
gained(entry) := [region | some i in entry.gained; some region in delta.region_sets[i]]

deny contains msg if {
	delta.version != 2
	msg := sprintf("access_delta version %v: this policy reads version 2", [delta.version])
}

where(rule) := sprintf(" (%s:%d)", [rule.file, rule.line]) if rule.file
where(rule) := sprintf(" (rule id %s)", [rule.id]) if { not rule.file; rule.id }
where(rule) := "" if { not rule.file; not rule.id }

deny contains msg if {
	some user in delta.blast_radius.admins_gained
	msg := sprintf("%s becomes an admin", [user])
}

deny contains msg if {
	delta.blast_radius.gained.users > max_users
	msg := sprintf("%d users gain access (at most %d in one change)", [delta.blast_radius.gained.users, max_users])
}

deny contains msg if {
	some entry in delta.entries
	some region in gained(entry)
	entry.tunnel[format_int(region.family, 10)] == "kept"
	region.protocol == "all"
	region.after != null
	msg := sprintf("%s (%s) gains every protocol and port to %s by accept %s%s", [
		entry.user, concat(", ", entry.devices), concat(", ", region.addresses),
		region.after.destination, where(region.after),
	])
}

deny contains msg if {
	some entry in delta.entries
	some region in gained(entry)
	entry.tunnel[format_int(region.family, 10)] == "kept"
	region.after == null
	msg := sprintf("%s (%s) gains access to %s: no rule decides it once the drop %s%s is gone", [
		entry.user, concat(", ", entry.devices), concat(", ", region.addresses),
		region.before.destination, where(region.before),
	])
}
