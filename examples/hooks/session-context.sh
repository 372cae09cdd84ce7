#!/usr/bin/env bash
# SessionStart: tell the model which git branch the session starts on.
cat >/dev/null
branch=$(git -C "${CLAUDE_PROJECT_DIR:-.}" rev-parse --abbrev-ref HEAD 2>/dev/null || echo none)
printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"current git branch: %s"}}\n' "$branch"
