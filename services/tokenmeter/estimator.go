package tokenmeter

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
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

// Tiktoken is an OpenAI-family estimator ("o200k" or "cl100k") backed by
// github.com/tiktoken-go/tokenizer, whose vocabularies are compiled into the
// binary (fully offline). The codec, and with it the vocabulary map, is built
// on first use, off the hot path of construction; a failure to count makes
// Count fall back to [Heuristic].
//
// The codecs are taken from the codec package by constructor, not through
// tokenizer.Get: Get names every encoding the library has, which links the
// r50k and p50k vocabularies (about 2.4 MB of tables) that no estimator uses.
type Tiktoken struct {
	name    string
	newCode func() *codec.Codec

	once  sync.Once
	codec *codec.Codec
}

// NewTiktoken returns the estimator for name "o200k" or "cl100k".
func NewTiktoken(name string) (*Tiktoken, error) {
	switch name {
	case "o200k":
		return &Tiktoken{name: name, newCode: codec.NewO200kBase}, nil
	case "cl100k":
		return &Tiktoken{name: name, newCode: codec.NewCl100kBase}, nil
	}
	return nil, fmt.Errorf("tiktoken: unknown encoding %q (want o200k or cl100k)", name)
}

// Name reports "o200k" or "cl100k".
func (t *Tiktoken) Name() string { return t.name }

// Count returns the exact token count under the encoding.
func (t *Tiktoken) Count(text string) int {
	if text == "" {
		return 0
	}
	t.once.Do(func() { t.codec = t.newCode() })
	n, err := t.codec.Count(text)
	if err != nil {
		return Heuristic{}.Count(text)
	}
	return n
}

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
