#!/usr/bin/env bash
# Step 2 of action.yml: runs one netform command as the inputs say, in the calling repository's
# workspace, and writes the outputs (exit-code, plan-file, output-file, unreviewed-file) to
# $GITHUB_OUTPUT and a markdown result to the job summary. Exit status: 0 unless netform exited 1,
# 3, 4, 5 or 6 (or 2 with fail-on-changes), or was stopped.
#
# The log is live and ordered: netform's stdout and stderr go to the log as they are written, in
# the order written (scripts/action-stream.mjs; stdout also to output-file), so each write's line
# is in the log the moment it settles, also when the job is cancelled or killed. While netform
# runs, workflow commands are stopped (::stop-commands::) with a token no one can guess, so no
# value from the server or the files (a device named "::error::…") can issue one;
# `validate`/`test`/`check --format github` are the exception, their annotations are meant.
set -uo pipefail
exec 2>&1 # one stream: stderr lines land between stdout lines in the order they were written
set -m    # jobs in their own process groups: a signal to the step reaches netform once, passed on

netform_js="$NETFORM_ACTION_PATH/dist/src/cli/main.js"
command="${INPUT_COMMAND:-plan}"
path="${INPUT_PATH:-desired/}"
format="${INPUT_FORMAT:-markdown}"
work="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
plan_file=""
unreviewed_file=""
case "$format" in markdown) ext=md ;; json) ext=json ;; csv) ext=csv ;; sarif) ext=sarif ;; *) ext=txt ;; esac
output_file="$work/netform-$command.$ext"
# Extra arguments, split as a shell would split words (no globbing, no expansion).
read -r -a extra <<< "${INPUT_ARGS:-}"

token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
stopped=""
stop_commands() {
  echo "::stop-commands::$token"
  stopped=1
}
resume_commands() {
  if [ -n "$stopped" ]; then
    # On a line of its own whatever came before (action-stream.mjs ends netform's last line when
    # netform exits; this empty line covers a netform that was killed): joined to a partial line,
    # the runner would not read it, and commands would stay stopped for the rest of the job.
    echo
    echo "::$token::"
    stopped=""
  fi
}

# run_netform FILE tee|quiet ARGS...: netform, run by action-stream.mjs (in its one node process):
# stdout into FILE and (tee) into the log, stderr into the log, in the order written. SIGINT and SIGTERM sent to this
# step are passed on once (a second one makes netform exit at once, as on a terminal); returns
# netform's exit code.
netform_pid=""
forward() { [ -n "$netform_pid" ] && kill -s "$1" "$netform_pid" 2> /dev/null; }
trap 'forward INT' INT
trap 'forward TERM' TERM
run_netform() {
  local code
  node "$NETFORM_ACTION_PATH/scripts/action-stream.mjs" "$1" "$2" "$netform_js" "${@:3}" < /dev/null &
  netform_pid=$!
  # `2> /dev/null`: a netform ended by a signal is reported below in words of our own, not by the
  # shell's job notice ("[1]+ Killed  node …"), which it prints where `wait` writes its errors.
  wait "$netform_pid" 2> /dev/null
  code=$?
  # A trapped signal ends `wait` early: wait again until netform itself has exited.
  while kill -0 "$netform_pid" 2> /dev/null; do
    wait "$netform_pid" 2> /dev/null
    code=$?
  done
  netform_pid=""
  return "$code"
}

# plan and check on a pull request: compare with its base (the Action fetches it), unless base: none.
base="${INPUT_BASE:-auto}"
base_args=()
if [ "$command" = plan ] || [ "$command" = check ]; then
  if [ "$base" = auto ]; then
    base=""
    case "${GITHUB_EVENT_NAME:-}" in
      pull_request | pull_request_target)
        if [ -n "${GITHUB_BASE_REF:-}" ]; then
          repo_dir="$path"
          [ -d "$repo_dir" ] || repo_dir="$(dirname -- "$path")"
          if git -C "$repo_dir" fetch --quiet --no-tags --depth=1 origin \
            "+refs/heads/$GITHUB_BASE_REF:refs/remotes/origin/$GITHUB_BASE_REF"; then
            base="origin/$GITHUB_BASE_REF"
          else
            echo "::warning::netform action: could not fetch the base branch $GITHUB_BASE_REF; the plan does not tell this pull request's changes from those already there"
          fi
        fi
        ;;
    esac
  fi
  [ "$base" = none ] && base=""
  [ -n "$base" ] && base_args=(--base "$base")
fi

# apply with reviewed-plan: settings.owners as the merge's first parent has it, and the approvals.
review_args=()
if [ "$command" = apply ] && [ -n "${INPUT_REVIEWED_PLAN:-}" ]; then
  owners_base="$base"
  if [ "$owners_base" = auto ]; then
    owners_base=""
    repo_dir="$path"
    [ -d "$repo_dir" ] || repo_dir="$(dirname -- "$path")"
    if git -C "$repo_dir" rev-parse --verify --quiet 'HEAD^1' > /dev/null 2>&1; then
      owners_base='HEAD^1'
    else
      echo "netform action: the checkout has no HEAD^1 (fetch-depth: 2 gives it): settings.owners is read from the merged files and the reviewed plan"
    fi
  fi
  [ "$owners_base" = none ] && owners_base=""
  [ -n "$owners_base" ] && review_args+=(--base "$owners_base")
  [ -n "${INPUT_APPROVALS:-}" ] && review_args+=(--approvals "$INPUT_APPROVALS")
elif [ -n "${INPUT_APPROVALS:-}" ]; then
  echo "::error::netform action: approvals goes with command: apply and reviewed-plan"
  exit 1
fi

if [ -n "${INPUT_PLAN_FILE:-}" ] && [ -n "${INPUT_REVIEWED_PLAN:-}" ]; then
  echo "::error::netform action: give plan-file (apply exactly that plan) or reviewed-plan (apply what it shows of path), not both"
  exit 1
fi

code=0
case "$command" in
  validate | test)
    [ "$format" = markdown ] && format=github
    # Annotations are the point of --format github: commands stay on.
    [ "$format" = github ] || stop_commands
    run_netform "$output_file" tee "$command" -f "$path" --format "$format" "${extra[@]}"
    code=$?
    ;;
  plan)
    plan_file="$work/netform-plan.json"
    stop_commands
    run_netform "$output_file" tee plan -f "$path" --format "$format" -o "$plan_file" "${base_args[@]}" "${extra[@]}"
    code=$?
    [ -s "$plan_file" ] || plan_file=""
    ;;
  apply)
    stop_commands
    # No terminal in CI: a saved plan needs no --yes (writing it was the approval), nor does a
    # reviewed plan; a bare -f needs --yes.
    if [ -n "${INPUT_PLAN_FILE:-}" ]; then
      run_netform "$output_file" tee apply "$INPUT_PLAN_FILE" "${extra[@]}"
    elif [ -n "${INPUT_REVIEWED_PLAN:-}" ]; then
      run_netform "$output_file" tee apply -f "$path" --reviewed "$INPUT_REVIEWED_PLAN" "${review_args[@]}" "${extra[@]}"
    else
      run_netform "$output_file" tee apply -f "$path" --yes "${extra[@]}"
    fi
    code=$?
    if [ "$code" = 5 ]; then
      # What is left to review: the plan of the files now that the reviewed changes are applied.
      unreviewed_file="$work/netform-unreviewed.md"
      run_netform "$unreviewed_file" quiet plan -f "$path" --format markdown "${extra[@]}"
      [ -s "$unreviewed_file" ] || unreviewed_file=""
    fi
    ;;
  check)
    # An access gate (input check): no-new-access compares with the base (a pull request), else
    # the server now with after apply (--live); no-access-to TARGET [--except USERS] as given.
    [ "$format" = markdown ] && format=github
    [ "$format" = github ] || stop_commands
    read -r -a gate <<< "${INPUT_CHECK:-no-new-access}"
    gate_args=()
    if [ "${gate[0]:-}" = no-new-access ]; then
      if [ -n "$base" ]; then gate_args=("${base_args[@]}"); else gate_args=(--live); fi
    fi
    run_netform "$output_file" tee check "${gate[@]}" -f "$path" --format "$format" "${gate_args[@]}" "${extra[@]}"
    code=$?
    ;;
  drift)
    stop_commands
    run_netform "$output_file" tee drift -f "$path" --format "$format" "${extra[@]}"
    code=$?
    ;;
  review)
    # The whole access map: into output-file only (upload it as an artifact), never the log or the
    # job summary, which everyone who can read the repository's runs can read.
    stop_commands
    review_args=()
    [ -e "$path" ] && review_args=(-f "$path")
    run_netform "$output_file" quiet review --format "$format" "${review_args[@]}" "${extra[@]}"
    code=$?
    ;;
  *)
    echo "::error::netform action: unknown command \"$command\" (validate, test, plan, apply, drift, review or check)"
    exit 1
    ;;
esac
if [ "$code" -gt 128 ] && [ "$code" != 130 ] && [ "$code" != 143 ]; then
  echo "netform action: netform was killed (exit code $code): the writes listed above finished; those in flight may or may not have; netform plan shows where the server is"
fi
resume_commands

{
  echo "exit-code=$code"
  echo "plan-file=$plan_file"
  echo "output-file=$output_file"
  echo "unreviewed-file=$unreviewed_file"
} >> "${GITHUB_OUTPUT:-/dev/null}"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  [ "$format" = markdown ] && [ "$command" != review ] && cat "$output_file" >> "$GITHUB_STEP_SUMMARY"
  [ -n "$unreviewed_file" ] && cat "$unreviewed_file" >> "$GITHUB_STEP_SUMMARY"
fi

case "$code" in
  0) exit 0 ;;
  2) [ "${INPUT_FAIL_ON_CHANGES:-false}" = true ] && exit 2; exit 0 ;;
  *) exit "$code" ;;
esac
