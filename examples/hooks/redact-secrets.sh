#!/usr/bin/env bash
# PostToolUse (any matcher): replace API-key-shaped secrets (sk-...) in the
# tool's output with [REDACTED]. The replacement is what the model sees and
# what the session stores.
input=$(cat)
# tool_response.content is a JSON string; edit it without decoding it.
content=$(printf '%s' "$input" | grep -oE '"tool_response":\{"content":"([^"\\]|\\.)*"' | head -n1)
content=${content#'"tool_response":{"content":'}
redacted=$(printf '%s' "$content" | sed -E 's/sk-[A-Za-z0-9-]+/[REDACTED]/g')
if [ -n "$content" ] && [ "$redacted" != "$content" ]; then
  printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":%s}}\n' "$redacted"
fi
