#!/bin/bash
# Formats the Go file a Write or Edit changed (read from Claude's
# tool_response.filePath) and says so in additionalContext.
set -euo pipefail
file=$(jq -r '.tool_response.filePath // empty')
[[ "$file" == *.go ]] || exit 0
gofmt -w "$file"
jq -n --arg f "$(basename "$file")" '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("gofmt ran on " + $f)}}'
