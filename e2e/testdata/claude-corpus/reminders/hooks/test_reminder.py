#!/usr/bin/env python3
"""Reminds the model of failing tests, reading Claude's Bash
tool_response (stdout, stderr, interrupted)."""
import json
import sys

data = json.load(sys.stdin)
resp = data["tool_response"]
out = resp["stdout"] + resp["stderr"]
if "--- FAIL" in out and not resp["interrupted"]:
    failed = [l.split()[2] for l in out.splitlines() if l.startswith("--- FAIL")]
    json.dump({"hookSpecificOutput": {"hookEventName": "PostToolUse",
               "additionalContext": "Failing tests: " + ", ".join(failed)}}, sys.stdout)
