#!/usr/bin/env bash
# PreToolUse Bash validator in the shape of Anthropic's example: only Bash
# calls are checked; a rule violation exits 2 with the reason on stderr.
input=$(cat)
tool=$(jq -r '.tool_name' <<<"$input")
cmd=$(jq -r '.tool_input.command // ""' <<<"$input")
[ "$tool" = "Bash" ] || exit 0
if grep -Eq '(^|[;&|[:space:]])grep([[:space:]]|$)' <<<"$cmd"; then
  echo "Use 'rg' (ripgrep) instead of 'grep' for better performance and features" >&2
  exit 2
fi
exit 0
