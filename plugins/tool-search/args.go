package toolsearch

import (
	"errors"
	"strings"
)

// GrepArgs are the grep tool's arguments (B5).
type GrepArgs struct {
	Pattern string  `json:"pattern" jsonschema_description:"Regular expression to search for (ripgrep / RE2 syntax)."`
	Path    *string `json:"path,omitempty" jsonschema_description:"File or directory to search. Defaults to the session working directory; a relative path resolves against it."`
	Include *string `json:"include,omitempty" jsonschema_description:"One glob that filters which files are searched (e.g. \"*.go\" or \"*.{ts,tsx}\"). Not a list; negation is not supported."`
}

// GlobArgs are the glob tool's arguments (B6).
type GlobArgs struct {
	Pattern string  `json:"pattern" jsonschema_description:"Glob pattern to match file paths against (e.g. \"**/*.go\" or \"src/**/*_test.go\"). A pattern without \"/\" matches the file name at any depth."`
	Path    *string `json:"path,omitempty" jsonschema_description:"Directory to search in. Defaults to the session working directory; a relative path resolves against it."`
}

// ValidateGrep applies the body-level checks of B5 (exact dsh wording).
// A nil Path or Include means "not given"; a given one must not be blank.
func ValidateGrep(a GrepArgs) error {
	if a.Pattern == "" {
		return errors.New("pattern must be a non-empty string")
	}
	if a.Path != nil && strings.TrimSpace(*a.Path) == "" {
		return errors.New("path must be a non-empty string when given")
	}
	if a.Include != nil {
		return validateInclude(*a.Include)
	}
	return nil
}

func validateInclude(include string) error {
	if strings.TrimSpace(include) == "" {
		return errors.New("include must be a non-empty glob when given")
	}
	if strings.HasPrefix(include, "!") {
		return errors.New(`include must be a positive glob filter; negated patterns ("!…") are not supported`)
	}
	depth := 0
	for _, c := range include {
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth = max(0, depth-1)
		case c == ',' && depth == 0:
			return errors.New("include must be one glob, not a comma-separated list (use {a,b} alternation instead)")
		}
	}
	return nil
}

// ValidateGlob applies the body-level checks of B6.
func ValidateGlob(a GlobArgs) error {
	if strings.TrimSpace(a.Pattern) == "" {
		return errors.New("pattern must be a non-empty string")
	}
	if a.Path != nil && strings.TrimSpace(*a.Path) == "" {
		return errors.New("path must be a non-empty string when given")
	}
	return nil
}
