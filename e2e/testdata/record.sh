#!/bin/bash
# Keeps the payload a hook gets, one file per event (and tool), as a
# Claude Code user's logging hook does; NAME.transcript says whether
# transcript_path named a file when the hook ran.
set -euo pipefail
input=$(cat)
event=$(jq -r .hook_event_name <<<"$input")
tool=$(jq -r '.tool_name // empty' <<<"$input")
name="$CLAUDE_PROJECT_DIR/payloads/$event${tool:+-$tool}"
mkdir -p "$CLAUDE_PROJECT_DIR/payloads"
jq -S . <<<"$input" >"$name.json"
if [ -f "$(jq -r .transcript_path <<<"$input")" ]; then echo file >"$name.transcript"; else echo missing >"$name.transcript"; fi
