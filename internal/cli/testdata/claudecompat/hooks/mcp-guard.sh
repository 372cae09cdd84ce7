#!/usr/bin/env bash
# PreToolUse guard for MCP tools, selected by the matcher mcp__fx__.*
input=$(cat)
echo "blocked $(jq -r '.tool_name' <<<"$input")" >&2
exit 2
