package tokenmeter

import (
	"encoding/json"
	"fmt"
)

// Usage is the token usage a provider reports for one chat completion, in the
// OpenAI/DeepSeek JSON shape (decode it straight from the response).
//
// DeepSeek semantics, which the meter follows for every provider:
// prompt_tokens already includes the cache hits (prompt_tokens =
// prompt_cache_hit_tokens + prompt_cache_miss_tokens), and completion_tokens
// already includes the reasoning tokens. Neither is ever added again.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens,omitempty"`
	// DeepSeek's cache fields.
	PromptCacheHitTokens  *int `json:"prompt_cache_hit_tokens,omitempty"`
	PromptCacheMissTokens *int `json:"prompt_cache_miss_tokens,omitempty"`
	// OpenAI's cache field (prompt_tokens_details.cached_tokens); it wins over
	// prompt_cache_hit_tokens when both are present.
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens,omitempty"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	} `json:"completion_tokens_details,omitempty"`
}

// CacheHitTokens returns the prompt tokens served from the provider's cache,
// clamped to [0, PromptTokens].
func (u Usage) CacheHitTokens() int {
	hit := 0
	switch {
	case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil:
		hit = *u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		hit = *u.PromptCacheHitTokens
	}
	return min(max(hit, 0), max(u.PromptTokens, 0))
}

// CacheMissTokens returns PromptTokens - CacheHitTokens.
func (u Usage) CacheMissTokens() int { return max(u.PromptTokens, 0) - u.CacheHitTokens() }

// ReasoningTokens returns the reasoning part of CompletionTokens.
func (u Usage) ReasoningTokens() int {
	if u.CompletionTokensDetails == nil {
		return 0
	}
	return u.CompletionTokensDetails.ReasoningTokens
}

// Validate rejects negative counts.
func (u Usage) Validate() error {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 {
		return fmt.Errorf("usage: negative token count (prompt %d, completion %d)", u.PromptTokens, u.CompletionTokens)
	}
	return nil
}

// Prices are a model's prices per million tokens, in any one currency.
type Prices struct {
	// InputCacheHit is the price of a prompt token served from the cache.
	InputCacheHit float64 `yaml:"inputCacheHit" json:"inputCacheHit" jsonschema:"minimum=0"`
	// InputCacheMiss is the price of any other prompt token.
	// Price per million prompt tokens not served from the cache.
	InputCacheMiss float64 `yaml:"inputCacheMiss" json:"inputCacheMiss" jsonschema:"minimum=0"`
	// Output is the price of a completion token (reasoning included).
	Output float64 `yaml:"output" json:"output" jsonschema:"minimum=0"`
}

// Cost returns hits×InputCacheHit + misses×InputCacheMiss +
// completion×Output, divided by one million. Reasoning tokens are inside
// completion and are not added again.
func (p Prices) Cost(hits, misses, completion int) float64 {
	return (float64(hits)*p.InputCacheHit + float64(misses)*p.InputCacheMiss + float64(completion)*p.Output) / 1e6
}

// Figures are the token figures of one request, or the sum over a session.
type Figures struct {
	// PromptTokens is the context the request used (hits included).
	PromptTokens     int `json:"promptTokens"`
	CacheHitTokens   int `json:"cacheHitTokens"`
	CacheMissTokens  int `json:"cacheMissTokens"`
	CompletionTokens int `json:"completionTokens"`
	// ReasoningTokens is the part of CompletionTokens spent reasoning.
	ReasoningTokens int `json:"reasoningTokens"`
	// Cost is the price of these tokens; 0 unless Priced.
	Cost   float64 `json:"cost,omitempty"`
	Priced bool    `json:"priced,omitempty"`
}

// CacheHitRatio returns hits / (hits + misses), or 0 without prompt tokens.
func (f Figures) CacheHitRatio() float64 {
	if f.CacheHitTokens+f.CacheMissTokens == 0 {
		return 0
	}
	return float64(f.CacheHitTokens) / float64(f.CacheHitTokens+f.CacheMissTokens)
}

// MarshalJSON adds the derived "cacheHitRatio" (0..1) to the fields.
func (f Figures) MarshalJSON() ([]byte, error) {
	type plain Figures
	return json.Marshal(struct {
		plain
		CacheHitRatio float64 `json:"cacheHitRatio"`
	}{plain(f), f.CacheHitRatio()})
}

func (f *Figures) add(g Figures) {
	f.PromptTokens += g.PromptTokens
	f.CacheHitTokens += g.CacheHitTokens
	f.CacheMissTokens += g.CacheMissTokens
	f.CompletionTokens += g.CompletionTokens
	f.ReasoningTokens += g.ReasoningTokens
	f.Cost += g.Cost
	f.Priced = f.Priced || g.Priced
}

// RequestRecord is what the meter recorded for one request.
type RequestRecord struct {
	Model string `json:"model"`
	// Estimated is true when the provider reported no usage: the figures are
	// the meter's estimates (prompt: the projection; completion: the reply),
	// never zeros.
	Estimated bool `json:"estimated"`
	Figures
}

// MarshalJSON writes the model, the Estimated flag and the figures (with
// their cacheHitRatio) as one flat object.
func (r RequestRecord) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		Model     string `json:"model"`
		Estimated bool   `json:"estimated"`
	}{r.Model, r.Estimated})
	if err != nil {
		return nil, err
	}
	fig, err := json.Marshal(r.Figures)
	if err != nil {
		return nil, err
	}
	return append(append(head[:len(head)-1], ','), fig[1:]...), nil
}
