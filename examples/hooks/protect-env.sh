#!/usr/bin/env bash
# PreToolUse (matcher: write|edit): block writes to .env files.
# Answers by exit code: 2 blocks the call and stderr is the reason the model reads.
input=$(cat)
path=$(printf '%s' "$input" | sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p')
case "$path" in
  *.env|*/.env|.env*)
    echo "refusing to modify $path: environment files hold secrets" >&2
    exit 2 ;;
esac
exit 0
