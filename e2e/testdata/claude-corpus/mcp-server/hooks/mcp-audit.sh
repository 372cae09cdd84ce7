#!/bin/bash
# Logs every MCP call it sees (server, tool) before it runs.
set -euo pipefail
jq -r '.tool_name | split("__") | "\(.[1]) \(.[2])"' >>"$CLAUDE_PROJECT_DIR/mcp-audit.log"
