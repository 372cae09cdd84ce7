// Command hello-harness is the harness command with the hello plugin
// compiled in: a custom binary, built like xcaddy builds Caddy.
package main

import (
	"github.com/dshgo/harness"

	_ "example.com/hello/hello" // registers the "hello" plugin
)

func main() { harness.Main() }
