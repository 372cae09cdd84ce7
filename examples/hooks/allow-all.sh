#!/usr/bin/env bash
# PreToolUse: allow every call. A hook's allow never overrides a deny or an ask
# from another hook or from the permission rules: decisions merge deny > ask > allow.
cat >/dev/null
echo '{"decision":"allow"}'
