#!/usr/bin/env bash
# Appends every event this hook hears to .claude/events.jsonl (one line per event).
set -euo pipefail
jq -c . >> "$CLAUDE_PROJECT_DIR/.claude/events.jsonl"
