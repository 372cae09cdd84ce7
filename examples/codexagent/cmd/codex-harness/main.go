// Command codex-harness is the harness command with the subagent-codex
// provider compiled in.
package main

import (
	"github.com/dshgo/harness"

	_ "example.com/codexagent/codexagent" // registers "subagent-codex"
)

func main() { harness.Main() }
