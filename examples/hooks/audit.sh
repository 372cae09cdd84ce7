#!/usr/bin/env bash
# PreToolUse or PostToolUse (any matcher): append "<event> <tool>" to an audit log.
# Says nothing on stdout, so it never changes a decision.
log=${AUDIT_LOG:-${CLAUDE_PROJECT_DIR:-.}/.harness-audit.log}
input=$(cat)
event=$(printf '%s' "$input" | sed -n 's/.*"hook_event_name":"\([^"]*\)".*/\1/p')
tool=$(printf '%s' "$input" | sed -n 's/.*"tool_name":"\([^"]*\)".*/\1/p')
printf '%s %s\n' "$event" "$tool" >>"$log"
