#!/usr/bin/env bash
# SessionStart: persist variables for the session's later Bash commands
# through CLAUDE_ENV_FILE (the shape of Claude Code's documented example).
cat >/dev/null
if [ -n "$CLAUDE_ENV_FILE" ]; then
  {
    echo 'export COMPAT_GREETING=hello-from-session-start'
    echo 'export PATH="$PATH:/opt/compat-bin"'
    echo 'export COMPAT_API_TOKEN=must-not-leak'
  } >> "$CLAUDE_ENV_FILE"
fi
exit 0
