package llm

import "fmt"

// Usage is the provider-reported token accounting of one model call, in tokens.
//
// PromptTokens counts every input token, cache hits included (DeepSeek:
// prompt_tokens = prompt_cache_hit_tokens + prompt_cache_miss_tokens; OpenAI:
// prompt_tokens includes prompt_tokens_details.cached_tokens), so it is the
// context used by the request: never add CacheHitTokens to it again (bug
// case B23). CompletionTokens includes ReasoningTokens.
//
// Adapters fill CacheMissTokens = PromptTokens - CacheHitTokens when the
// provider reports only hits.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	CacheHitTokens   int64 `json:"cacheHitTokens"`
	CacheMissTokens  int64 `json:"cacheMissTokens"`
	ReasoningTokens  int64 `json:"reasoningTokens"`
}

// ContextTokens is the context window used by the request: PromptTokens.
func (u Usage) ContextTokens() int64 { return u.PromptTokens }

// CacheHitRatio is CacheHitTokens / PromptTokens in [0, 1]; 0 without input.
func (u Usage) CacheHitRatio() float64 {
	if u.PromptTokens <= 0 {
		return 0
	}
	return float64(u.CacheHitTokens) / float64(u.PromptTokens)
}

// CacheReported reports whether the provider split the prompt tokens into
// cache hits and misses (a provider without a prompt cache reports neither).
func (u Usage) CacheReported() bool { return u.CacheHitTokens+u.CacheMissTokens > 0 }

// CacheText is the cache split as front ends show it: "cache 89% hit (800
// hit · 100 miss)"; "" when the provider reported no split.
func (u Usage) CacheText() string {
	if !u.CacheReported() {
		return ""
	}
	return fmt.Sprintf("cache %.0f%% hit (%d hit · %d miss)", 100*u.CacheHitRatio(), u.CacheHitTokens, u.CacheMissTokens)
}

// Add sums two usages field by field: session totals are the sum of
// per-request figures. (Within one stream, reports are never added: the
// last one wins.)
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CacheHitTokens:   u.CacheHitTokens + o.CacheHitTokens,
		CacheMissTokens:  u.CacheMissTokens + o.CacheMissTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
	}
}

// Prices are a model's prices in currency units (normally USD) per 1M tokens.
// The zero value means "unknown".
type Prices struct {
	// CacheHit is the price of input tokens served from the provider's cache.
	CacheHit float64 `yaml:"cacheHit" json:"cacheHit,omitempty" jsonschema:"minimum=0"`
	// CacheMiss is the price of uncached input tokens.
	CacheMiss float64 `yaml:"cacheMiss" json:"cacheMiss,omitempty" jsonschema:"minimum=0"`
	// Output is the price of completion tokens (reasoning included).
	Output float64 `yaml:"output" json:"output,omitempty" jsonschema:"minimum=0"`
}

// Known reports whether any price is set.
func (p Prices) Known() bool { return p != Prices{} }

// Cost is hits × CacheHit + misses × CacheMiss + completion × Output, per 1M
// tokens. Reasoning tokens are inside CompletionTokens and are not added
// again. Without a cache breakdown, all prompt tokens are priced as misses.
func (p Prices) Cost(u Usage) float64 {
	hits, misses := u.CacheHitTokens, u.CacheMissTokens
	if hits+misses == 0 {
		misses = u.PromptTokens
	}
	return (float64(hits)*p.CacheHit + float64(misses)*p.CacheMiss + float64(u.CompletionTokens)*p.Output) / 1e6
}
