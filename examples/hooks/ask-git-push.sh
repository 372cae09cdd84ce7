#!/usr/bin/env bash
# PreToolUse (matcher: bash): ask the user before any git push.
input=$(cat)
if printf '%s' "$input" | grep -qE '"command":"[^"]*git +push'; then
  echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"pushing publishes commits"}}'
fi
