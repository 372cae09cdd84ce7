package toolsearch

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/services/tools"
)

// The search tools' presentations (tools.WithPresent): kind search, titled
// with the pattern and where it looks; done, a count as the summary and
// the files found as the locations, so a front end can follow the agent.

// maxLocations bounds the files a search's presentation lists.
const maxLocations = 50

// PresentGrep is grep's presentation: the pattern ("TODO in src (*.go)");
// done, "N matches in M files" and the matched files, each at its first
// matching line.
func PresentGrep(in tools.PresentInput[GrepArgs, GrepValue]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindSearch, Title: searchTitle(in.Args.Pattern, in.Args.Path)}
	if in.Args.Include != nil && *in.Args.Include != "" {
		p.Title += " (" + *in.Args.Include + ")"
	}
	if !in.Succeeded() {
		return p
	}
	v := in.Out
	seen := map[string]bool{}
	for _, m := range v.Matches {
		if seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		if len(p.Locations) < maxLocations {
			p.Locations = append(p.Locations, tools.Location{Path: absolute(in.Cwd, m.Path), Line: m.LineNumber})
		}
	}
	p.Summarize(fmt.Sprintf("%d %s in %d %s", len(v.Matches), matchNoun(len(v.Matches)), len(seen), fileNoun(len(seen))))
	return p
}

// PresentGlob is glob's presentation: the pattern ("**/*.go in src");
// done, "N files" and the files.
func PresentGlob(in tools.PresentInput[GlobArgs, GlobValue]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindSearch, Title: searchTitle(in.Args.Pattern, in.Args.Path)}
	if !in.Succeeded() {
		return p
	}
	v := in.Out
	for _, path := range v.Paths {
		if len(p.Locations) == maxLocations {
			break
		}
		p.Locations = append(p.Locations, tools.Location{Path: absolute(in.Cwd, path)})
	}
	p.Summarize(fmt.Sprintf("%d %s", len(v.Paths), fileNoun(len(v.Paths))))
	return p
}

// searchTitle is "pattern", or "pattern in path" when a path was given.
func searchTitle(pattern string, path *string) string {
	if path != nil && strings.TrimSpace(*path) != "" {
		return pattern + " in " + *path
	}
	return pattern
}

// absolute is path made absolute against cwd (unchanged when cwd is "").
func absolute(cwd, path string) string {
	if filepath.IsAbs(path) || cwd == "" {
		return path
	}
	return filepath.Join(cwd, filepath.FromSlash(path))
}

func fileNoun(n int) string {
	if n == 1 {
		return "file"
	}
	return "files"
}
