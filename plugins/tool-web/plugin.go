package toolweb

import (
	"fmt"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// Plugin registers web_fetch, and web_search when a provider is
// configured. It waits for the tool registry; the subprocess row, when
// mounted, decides which hosts the tools reach.
var Plugin = core.Define("tool-web", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("web_fetch (a URL as Markdown) and web_search (a configured provider), within the sandbox's network policy"))

// web is the plugin's state: config, gate, provider, cache.
type web struct {
	cfg      Config
	gate     *gate
	provider Provider
	cache    *cache
}

func apply(c *core.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return fmt.Errorf("tool-web: %w", err)
	}
	rt, _ := core.Lookup(c, subprocess.Key)
	w := &web{cfg: cfg, cache: &cache{per: cfg.CacheEntries}, provider: newProvider(cfg.Search),
		gate: &gate{rt: rt, allowPrivate: cfg.AllowPrivateAddresses, granted: map[string]bool{}, denied: map[string]bool{}}}
	if err := tools.Register(c, w.fetchTool()); err != nil {
		return err
	}
	if w.provider != nil {
		return tools.Register(c, w.searchTool())
	}
	return nil
}
