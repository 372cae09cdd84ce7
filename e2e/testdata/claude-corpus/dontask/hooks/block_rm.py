#!/usr/bin/env python3
"""Blocks destructive rm, in the shape of the public bash validators:
exit 2 with the reason on stderr."""
import json
import re
import sys

data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if re.search(r"\brm\s+-[a-z]*r[a-z]*f", command):
    print("Blocked: recursive forced delete (%s mode)" % data["permission_mode"], file=sys.stderr)
    sys.exit(2)
