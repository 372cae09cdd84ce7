// Command harness runs AI agents composed from plugins. See docs/cli.md.
package main

import "github.com/dshgo/harness"

func main() { harness.Main() }
