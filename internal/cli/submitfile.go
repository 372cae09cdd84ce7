package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/plugins/worker"
)

// submitLine is one line of `submit --file`: a prompt and the fields of
// the single submit's flags.
type submitLine struct {
	Prompt   string   `json:"prompt"`
	Repo     string   `json:"repo"`
	Ref      string   `json:"ref"`
	Dir      string   `json:"dir"`
	Worktree string   `json:"worktree"`
	Model    string   `json:"model"`
	MaxSteps int      `json:"maxSteps"`
	MaxCost  float64  `json:"maxCostUsd"`
	MaxTok   int64    `json:"maxTokens"`
	Key      string   `json:"key"`
	Tag      string   `json:"tag"`
	Tags     []string `json:"tags"`
	Priority int      `json:"priority"`
	Queue    string   `json:"queue"`
}

// maxSubmitLine bounds one line of a submit file (a prompt and a patch).
const maxSubmitLine = 4 << 20

// submitFile enqueues every line of path with one InsertMany; defaults
// are the command's flags. Nothing is enqueued when a line is bad: every
// bad line is reported as PATH:LINE: what.
func submitFile(env *Env, path string, defaults worker.Submission, asJSON bool) error {
	subs, err := readSubmitFile(path, defaults)
	if err != nil {
		return UsageError(err)
	}
	return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
		res, err := w.SubmitMany(ctx, subs)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return Failure(err)
			}
			return UsageError(err)
		}
		for _, r := range res {
			if asJSON {
				b, err := json.Marshal(jobView(r.Job))
				if err != nil {
					return Failure(err)
				}
				fmt.Fprintln(env.Stdout, string(b))
				continue
			}
			fmt.Fprintln(env.Stdout, r.Job.ID)
		}
		return nil
	})
}

// readSubmitFile parses and validates every line of path ("-": stdin is
// not supported; a file only). Blank lines are skipped.
func readSubmitFile(path string, defaults worker.Submission) ([]worker.Submission, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	defer f.Close()
	return parseSubmitLines(filepath.Base(path), f, defaults)
}

// parseSubmitLines reads JSON Lines from r, naming lines as name:LINE.
func parseSubmitLines(name string, r io.Reader, defaults worker.Submission) ([]worker.Submission, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSubmitLine)
	var (
		subs []worker.Submission
		bad  []error
	)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		sub, err := submissionOf(line, defaults)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s:%d: %w", name, n, err))
			continue
		}
		subs = append(subs, sub)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w\nnothing was enqueued", errors.Join(bad...))
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("%s: no submissions (one JSON object per line, with \"prompt\")", name)
	}
	return subs, nil
}

// submissionOf decodes one line over defaults and validates it.
func submissionOf(line []byte, defaults worker.Submission) (worker.Submission, error) {
	var l submitLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return worker.Submission{}, fmt.Errorf("not a submission object: %w", err)
	}
	if dec.More() {
		return worker.Submission{}, errors.New("more than one JSON value on the line")
	}
	sub := defaults
	sub.Tags = append([]string(nil), defaults.Tags...)
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	sub.Args.Prompt = l.Prompt
	set(&sub.Args.Repo, l.Repo)
	set(&sub.Args.Ref, l.Ref)
	set(&sub.Args.Dir, l.Dir)
	set(&sub.Args.Worktree, l.Worktree)
	set(&sub.Args.Model, l.Model)
	set(&sub.Args.Key, l.Key)
	set(&sub.Queue, l.Queue)
	if l.MaxSteps != 0 {
		sub.Args.MaxSteps = l.MaxSteps
	}
	if l.MaxCost != 0 {
		sub.Args.MaxCostUSD = l.MaxCost
	}
	if l.MaxTok != 0 {
		sub.Args.MaxTokens = l.MaxTok
	}
	if l.Priority != 0 {
		sub.Priority = l.Priority
	}
	if l.Tag != "" {
		sub.Tags = append(sub.Tags, l.Tag)
	}
	sub.Tags = append(sub.Tags, l.Tags...)
	if sub.Args.Dir != "" && !filepath.IsAbs(sub.Args.Dir) {
		return worker.Submission{}, fmt.Errorf("dir %q: must be an absolute path", sub.Args.Dir)
	}
	if strings.TrimSpace(sub.Args.Prompt) == "" {
		return worker.Submission{}, errors.New(`"prompt": required`)
	}
	if err := sub.Validate(); err != nil {
		return worker.Submission{}, err
	}
	return sub, nil
}
