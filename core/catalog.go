package core

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Catalog maps plugin names (harness.yml's `name`) to plugin definitions.
// A binary's catalog holds its built-in plugins (the plugins/std list, which
// the harness package passes in) and the third-party plugins that called
// [Register] from an init function (the Caddy model).
type Catalog struct {
	mu     sync.RWMutex
	byName map[string]Plugin
}

// NewCatalog returns a catalog holding ps; a duplicate name is an error.
func NewCatalog(ps ...Plugin) (*Catalog, error) {
	c := &Catalog{byName: map[string]Plugin{}}
	for _, p := range ps {
		if err := c.Add(p); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Add registers p. Registering the same definition twice is a no-op; a
// different plugin under a taken name is an error, and so is a plugin whose
// config type is a pointer ([ErrPointerConfig], see [Define]).
func (c *Catalog) Add(p Plugin) error {
	if err := definitionError(p); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = map[string]Plugin{}
	}
	if old, ok := c.byName[p.Name()]; ok {
		if old == p {
			return nil
		}
		return fmt.Errorf("plugin %q registered twice", p.Name())
	}
	c.byName[p.Name()] = p
	return nil
}

// Get returns the plugin called name.
func (c *Catalog) Get(name string) (Plugin, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.byName[name]
	return p, ok
}

// All returns every plugin sorted by name.
func (c *Catalog) All() []Plugin {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Plugin, 0, len(c.byName))
	for _, p := range c.byName {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Plugin) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Names returns the sorted plugin names.
func (c *Catalog) Names() []string {
	ps := c.All()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}

var registered = &Catalog{}

// Register adds p to the process-wide catalog that harness binaries start
// from: the one way a third-party plugin package makes its plugin available
// to harness.yml. Call it from an init function. A second plugin with the
// same name, or one with a pointer config type ([ErrPointerConfig]), is a
// programmer error and panics at init, naming the plugin. (Built-in plugins are
// listed in plugins/std instead.)
func Register(p Plugin) {
	if err := registered.Add(p); err != nil {
		panic(err)
	}
}

// Registered returns the plugins added with [Register], sorted by name.
func Registered() []Plugin { return registered.All() }
