#!/bin/bash
# Appends one line per event to the project's event log, as public
# "log every hook" scripts do.
set -euo pipefail
jq -c '{event: .hook_event_name, source: (.source // null), reason: (.reason // null), mode: .permission_mode}' \
  >>"$CLAUDE_PROJECT_DIR/events.log"
