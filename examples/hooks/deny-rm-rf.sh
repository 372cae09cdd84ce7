#!/usr/bin/env bash
# PreToolUse (matcher: bash): deny a command that removes recursively and forcibly.
# Answers with structured JSON on stdout and exit code 0.
input=$(cat)
command=$(printf '%s' "$input" | grep -oE '"command":"([^"\\]|\\.)*"' | head -n1)
if printf '%s' "$command" | grep -qE 'rm +(-[A-Za-z]*r[A-Za-z]*f|-[A-Za-z]*f[A-Za-z]*r|-r +-f|-f +-r)'; then
  cat <<'JSON'
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rm -rf is not allowed by policy; delete files one by one or ask the user"}}
JSON
fi
exit 0
