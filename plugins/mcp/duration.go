package mcp

import "github.com/dshgo/harness/core/manifest"

// Duration is a configuration duration written as a Go duration string in
// harness.yml ("2m", "500ms"); see manifest.Duration.
type Duration = manifest.Duration
