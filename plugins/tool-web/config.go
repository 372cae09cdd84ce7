package toolweb

import (
	"fmt"
	"net/url"
	"time"

	"github.com/dshgo/harness/core/manifest"
)

// Config configures the web tools.
type Config struct {
	// MaxBytes bounds the bytes read of one response body (default
	// 5242880, 5 MiB); a longer body is cut there with a note.
	MaxBytes int64 `yaml:"maxBytes" json:"maxBytes,omitempty"`
	// Timeout bounds one fetch or search, redirects included (default 30s).
	Timeout manifest.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxRedirects bounds the same-host redirects followed (default 5).
	MaxRedirects int `yaml:"maxRedirects" json:"maxRedirects,omitempty"`
	// AllowPrivateAddresses lets the tools connect to loopback, private
	// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local and CGNAT
	// addresses. Default false: such an address is refused at connect
	// time, unless the host is an IP address or localhost that
	// sandbox.network.allowedDomains names itself.
	AllowPrivateAddresses bool `yaml:"allowPrivateAddresses" json:"allowPrivateAddresses,omitempty"`
	// CacheEntries bounds the cached results per session (default 64).
	CacheEntries int `yaml:"cacheEntries" json:"cacheEntries,omitempty"`
	// Search configures web_search; without a provider the tool is not
	// registered.
	Search SearchConfig `yaml:"search" json:"search,omitempty"`
}

// SearchConfig names web_search's provider.
type SearchConfig struct {
	// Provider is searxng (a SearXNG instance's JSON API) or brave (the
	// Brave Search API); empty: no web_search.
	Provider string `yaml:"provider" json:"provider,omitempty" jsonschema:"enum=,enum=searxng,enum=brave"`
	// BaseURL is the provider's address: the SearXNG instance (required
	// for searxng), or the Brave API (default https://api.search.brave.com).
	BaseURL string `yaml:"baseURL" json:"baseURL,omitempty"`
	// APIKeyEnv names the environment variable holding the API key
	// (brave: default BRAVE_API_KEY; sent as X-Subscription-Token).
	APIKeyEnv string `yaml:"apiKeyEnv" json:"apiKeyEnv,omitempty"`
	// MaxResults bounds the results returned (default 10).
	MaxResults int `yaml:"maxResults" json:"maxResults,omitempty"`
}

// Defaults of Config.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
	DefaultCacheEntries = 64
	DefaultMaxResults   = 10
	DefaultBraveURL     = "https://api.search.brave.com"
)

// withDefaults fills the zero fields and checks the rest, naming the
// field.
func (c Config) withDefaults() (Config, error) {
	if c.MaxBytes < 0 || c.MaxRedirects < 0 || c.CacheEntries < 0 || c.Search.MaxResults < 0 || c.Timeout < 0 {
		return c, fmt.Errorf("maxBytes, timeout, maxRedirects, cacheEntries and search.maxResults must not be negative")
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Timeout == 0 {
		c.Timeout = manifest.Duration(DefaultTimeout)
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.CacheEntries == 0 {
		c.CacheEntries = DefaultCacheEntries
	}
	if c.Search.MaxResults == 0 {
		c.Search.MaxResults = DefaultMaxResults
	}
	s := &c.Search
	switch s.Provider {
	case "":
		return c, nil
	case "searxng":
		if s.BaseURL == "" {
			return c, fmt.Errorf("search.baseURL: required for the searxng provider (the instance's address)")
		}
	case "brave":
		if s.BaseURL == "" {
			s.BaseURL = DefaultBraveURL
		}
		if s.APIKeyEnv == "" {
			s.APIKeyEnv = "BRAVE_API_KEY"
		}
	default:
		return c, fmt.Errorf("search.provider: %q: must be searxng or brave", s.Provider)
	}
	if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("search.baseURL: %q: want an http or https URL", s.BaseURL)
	}
	return c, nil
}
