package tokenmeter

import (
	"fmt"
	"sort"
	"strings"
)

// Estimator counts the tokens of a text. Implementations are deterministic and
// safe for concurrent use; Count("") is 0.
type Estimator interface {
	// Name is the estimator's config name ("heuristic", "bytes", …).
	Name() string
	// Count returns the token count of text.
	Count(text string) int
}

// Bytes is the "bytes" estimator: ceil(len(text)/4) with len in bytes.
// Deterministic and dependency-free; meant for tests. It overprices English
// prose and Chinese and underprices code, JSON and digit-heavy logs.
type Bytes struct{}

// Name reports "bytes".
func (Bytes) Name() string { return "bytes" }

// Count returns ceil(len(text)/4).
func (Bytes) Count(text string) int { return (len(text) + 3) / 4 }

// EstimatorNames lists every estimator name NewEstimator accepts.
var EstimatorNames = []string{"heuristic", "bytes", "o200k", "cl100k", "tokenizer-json"}

// NewEstimator builds the estimator called name. "tokenizer-json" needs
// tokenizerFile (a HuggingFace tokenizer.json path); the others ignore it.
// An unknown name is an error listing the valid ones.
func NewEstimator(name, tokenizerFile string) (Estimator, error) {
	switch name {
	case "", "heuristic":
		return Heuristic{}, nil
	case "bytes":
		return Bytes{}, nil
	case "o200k", "cl100k":
		return NewTiktoken(name)
	case "tokenizer-json":
		if tokenizerFile == "" {
			return nil, fmt.Errorf("estimator %q needs a tokenizer file", name)
		}
		return LoadTokenizerJSON(tokenizerFile)
	}
	names := append([]string(nil), EstimatorNames...)
	sort.Strings(names)
	return nil, fmt.Errorf("unknown estimator %q (want one of %s)", name, strings.Join(names, ", "))
}
