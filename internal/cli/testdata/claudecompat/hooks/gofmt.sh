#!/usr/bin/env bash
# PostToolUse formatter for Edit|Write|MultiEdit: gofmt the written Go file
# (Claude Code sends an absolute file_path).
input=$(cat)
file=$(jq -r '.tool_input.file_path // empty' <<<"$input")
case "$file" in
  /*.go) gofmt -w "$file" ;;
esac
exit 0
