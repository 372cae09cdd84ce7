// Command wordcount-harness is the harness command with the word count
// plugins compiled in and mounted beside the default rows.
package main

import (
	_ "embed"

	"github.com/dshgo/harness"

	_ "example.com/wordcount/filecount"  // registers "tool-file-word-count"
	_ "example.com/wordcount/wordcount"  // registers "tool-word-count"
	_ "example.com/wordcount/wordpolicy" // registers "word-count-policy"
)

// rows adds this binary's rows to the default manifest.
//
//go:embed wordcount.patch.yml
var rows []byte

func main() { harness.Main(harness.WithPatch("wordcount.patch.yml", rows)) }
