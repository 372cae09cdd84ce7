package toolsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Runner runs one ripgrep process (argv only, never through a shell) in dir
// with stdin ignored and both streams collected, honouring ctx: when ctx ends
// the process group gets SIGTERM, then SIGKILL after the caps' grace. The
// plugin implements it over the subprocess service.
type Runner interface {
	Run(ctx context.Context, argv []string, dir string, caps Caps) (RunResult, error)
}

// RunResult is the outcome of one Runner.Run.
type RunResult struct {
	// Stdout is the collected standard output.
	Stdout []byte
	// StdoutLossy reports that stdout exceeded Caps.RawOutputMaxBytes and was cut.
	StdoutLossy bool
	// Stderr is the retained stderr tail.
	Stderr string
	// StderrLossy reports that stderr was cut to its tail.
	StderrLossy bool
	// ExitCode is the exit status, or -1 when Signal is set.
	ExitCode int
	// Signal names the terminating signal ("SIGKILL"), or "".
	Signal string
}

// rgGrepArgv is the grep argv after the program: JSON records, ignore files
// honoured with or without a git repository, the user's global git excludes and
// ripgrep config files not consulted, so the pure-Go fallback can agree.
func rgGrepArgv(pattern, include, file string) []string {
	argv := []string{"--no-config", "--json", "--no-require-git", "--no-ignore-global", "--regexp=" + pattern}
	if include != "" {
		argv = append(argv, "--glob="+include)
	}
	if file != "" {
		argv = append(argv, "--", file)
	}
	return argv
}

// rgGlobArgv is the glob argv: files only, hidden and ignored included, VCS
// metadata directories excluded. Sorting happens after the run.
func rgGlobArgv(pattern string) []string {
	argv := []string{"--no-config", "--files", "--glob=" + pattern, "--no-ignore", "--hidden"}
	for _, name := range vcsDirNames {
		argv = append(argv, "--glob=!**/"+name, "--glob=!**/"+name+"/**")
	}
	return argv
}

var rgPatternError = regexp.MustCompile(`(?i)regex parse error|error parsing glob`)

// runRipgrep runs rg and classifies its outcome like dsh: exit 1 is "no
// matches", other non-zero exits and signals are failures, a regex or glob
// parse error is SEARCH_INVALID_PATTERN, a stdout over the raw cap is
// SEARCH_RAW_OUTPUT_OVERFLOW.
func runRipgrep(ctx context.Context, r Runner, tool, rg string, args []string, dir string, caps Caps) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, abortedError(tool, err)
	}
	res, err := r.Run(ctx, append([]string{rg}, args...), dir, caps)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, abortedError(tool, ctx.Err())
		}
		return nil, false, &Error{Code: CodeFailed, Message: tool + " could not start its search command (ripgrep launch failed)", Err: err}
	}
	if ctx.Err() != nil {
		return nil, false, abortedError(tool, ctx.Err())
	}
	if res.Signal != "" {
		return nil, false, &Error{Code: CodeFailed, Message: fmt.Sprintf("%s search command was killed by signal %s", tool, res.Signal)}
	}
	stderr := strings.TrimSpace(res.Stderr)
	if res.ExitCode == 2 && strings.HasPrefix(stderr, "No files were searched") {
		// Filters left nothing to search: the same "no matches" the pure-Go path reports.
		return nil, true, nil
	}
	if res.ExitCode != 0 && res.ExitCode != 1 {
		if stderr != "" && res.StderrLossy {
			stderr += " [stderr truncated]"
		}
		if rgPatternError.MatchString(stderr) {
			return nil, false, &Error{Code: CodeInvalidPattern, Message: tool + " pattern rejected by ripgrep: " + stderr}
		}
		msg := fmt.Sprintf("%s search failed (exit %d)", tool, res.ExitCode)
		if stderr != "" {
			msg += ": " + stderr
		}
		return nil, false, &Error{Code: CodeFailed, Message: msg}
	}
	if res.StdoutLossy || len(res.Stdout) > caps.RawOutputMaxBytes {
		return nil, false, &Error{Code: CodeRawOutputOverflow, Message: fmt.Sprintf("%s produced more than the %d-byte raw output cap; narrow pattern, path, or include and retry", tool, caps.RawOutputMaxBytes)}
	}
	return res.Stdout, res.ExitCode == 1, nil
}

// rgRecord is the part of one `rg --json` line that grep reads.
type rgRecord struct {
	Type string `json:"type"`
	Data struct {
		Path       *rgText `json:"path"`
		LineNumber *int    `json:"line_number"`
		Lines      *rgText `json:"lines"`
	} `json:"data"`
}

type rgText struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

func malformed(detail string) error {
	return &Error{Code: CodeFailed, Message: "grep received malformed ripgrep --json output (" + detail + ")"}
}

// parseRgJSON extracts the match records of `rg --json` output.
func parseRgJSON(stdout []byte) ([]found, error) {
	var out []found
	for line := range bytes.SplitSeq(stdout, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		var rec rgRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, malformed("a line is not JSON")
		}
		if rec.Type != "match" {
			continue
		}
		d := rec.Data
		switch {
		case d.Path == nil || d.Path.Text == nil:
			return nil, malformed("a match record has no path text")
		case d.LineNumber == nil:
			return nil, malformed("a match record has no line number")
		case d.Lines == nil || (d.Lines.Text == nil && d.Lines.Bytes == nil):
			return nil, malformed("a match record has no line content")
		}
		text := "(line is not valid UTF-8)"
		if d.Lines.Text != nil {
			text = strings.TrimSuffix(strings.TrimSuffix(*d.Lines.Text, "\n"), "\r")
		}
		out = append(out, found{rel: strings.TrimPrefix(*d.Path.Text, "./"), match: Match{LineNumber: *d.LineNumber, Line: text}})
	}
	return out, nil
}
