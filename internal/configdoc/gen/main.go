// Command gen writes core/manifest/configdoc_gen.go, the table of config
// field descriptions read from the built-in plugins' Go doc comments. It is
// run by go generate in core/manifest:
//
//	go generate ./core/manifest
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dshgo/harness/internal/configdoc"
	"github.com/dshgo/harness/plugins/std"
)

func main() {
	root := flag.String("root", "../..", "the module's root directory")
	out := flag.String("o", "configdoc_gen.go", "output file")
	flag.Parse()
	src, err := configdoc.Generate(*root, std.Plugins())
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}
