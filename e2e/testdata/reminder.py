#!/usr/bin/env python3
"""A PostToolUse reminder in the shape of public ones: it reads Claude Code's
tool_response (Bash: stdout; Edit/Write: filePath and structuredPatch) and
tells the model something through additionalContext."""
import json
import sys

event = json.load(sys.stdin)
tool, resp = event["tool_name"], event["tool_response"]
note = None
if tool == "Bash" and "FAIL" in resp["stdout"] and not resp["interrupted"]:
    note = "Reminder: a test failed; fix it before moving on."
elif tool in ("Edit", "Write"):
    added = sum(1 for h in resp["structuredPatch"] for l in h["lines"] if l.startswith("+"))
    removed = sum(1 for h in resp["structuredPatch"] for l in h["lines"] if l.startswith("-"))
    note = "Reminder: %s changed %s (+%d -%d)." % (tool, resp["filePath"].rsplit("/", 1)[-1], added, removed)
if note:
    json.dump({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}}, sys.stdout)
