#!/usr/bin/env bash
# Step 2 of action.yml: runs one netform command as the inputs say, in the calling repository's
# workspace. Writes the outputs (exit-code, plan-file, output-file) to $GITHUB_OUTPUT and a
# markdown result to the job summary. Exit status: 0 unless netform exited 1, 3 or 4 (or 2 with
# fail-on-changes).
set -uo pipefail
netform() { node "$NETFORM_ACTION_PATH/dist/src/cli/main.js" "$@"; }

command="${INPUT_COMMAND:-plan}"
path="${INPUT_PATH:-desired/}"
format="${INPUT_FORMAT:-markdown}"
work="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
plan_file=""
case "$format" in markdown) ext=md ;; json) ext=json ;; *) ext=txt ;; esac
output_file="$work/netform-$command.$ext"
# Extra arguments, split as a shell would split words (no globbing, no expansion).
read -r -a extra <<< "${INPUT_ARGS:-}"

case "$command" in
  validate)
    [ "$format" = markdown ] && format=github
    netform validate -f "$path" --format "$format" "${extra[@]}" > "$output_file"
    code=$?
    ;;
  plan)
    plan_file="$work/netform-plan.json"
    netform plan -f "$path" --format "$format" -o "$plan_file" "${extra[@]}" > "$output_file"
    code=$?
    [ -s "$plan_file" ] || plan_file=""
    ;;
  apply)
    # No terminal in CI: a saved plan needs no --yes (writing it was the approval); -f needs --yes.
    if [ -n "${INPUT_PLAN_FILE:-}" ]; then
      netform apply "$INPUT_PLAN_FILE" "${extra[@]}" > "$output_file"
    else
      netform apply -f "$path" --yes "${extra[@]}" > "$output_file"
    fi
    code=$?
    ;;
  drift)
    netform drift -f "$path" --format "$format" "${extra[@]}" > "$output_file"
    code=$?
    ;;
  *)
    echo "::error::netform action: unknown command \"$command\" (validate, plan, apply or drift)"
    exit 1
    ;;
esac

cat "$output_file"
{
  echo "exit-code=$code"
  echo "plan-file=$plan_file"
  echo "output-file=$output_file"
} >> "${GITHUB_OUTPUT:-/dev/null}"
if [ "$format" = markdown ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$output_file" >> "$GITHUB_STEP_SUMMARY"
fi

case "$code" in
  0) exit 0 ;;
  2) [ "${INPUT_FAIL_ON_CHANGES:-false}" = true ] && exit 2; exit 0 ;;
  *) exit "$code" ;;
esac
