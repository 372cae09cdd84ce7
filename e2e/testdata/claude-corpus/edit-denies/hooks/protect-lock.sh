#!/bin/bash
# Refuses edits of lock files, as public "protect files" hooks do:
# a JSON permissionDecision of deny with a reason.
set -euo pipefail
path=$(jq -r '.tool_input.file_path // empty')
case "$path" in
  *package-lock.json|*yarn.lock|*go.sum)
    jq -n --arg p "$path" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: ("lock files are generated: " + $p)}}'
    ;;
esac
