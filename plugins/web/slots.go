package web

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sync"

	"github.com/dshgo/harness/core"
)

// The slots of the page. A component mounted in a slot is a custom element
// defined by an ES module; the page creates one element per mount and sets
// the documented properties on it.
const (
	// SlotSidebar: below the workspace list. Props: workspace (the
	// selected workspace object or null).
	SlotSidebar = "sidebar"
	// SlotSettingsPluginItem: replaces a plugin's generated settings card.
	// Props: plugin (name), id (the manifest row), schema, values, save(patch)
	// (a function returning a promise of the server's answer).
	SlotSettingsPluginItem = "settings.plugin.item"
	// SlotConversationToolView: renders the calls of one tool (Component.Tool)
	// in the conversation instead of the default tool card. Props: call
	// ({id, name, arguments}), result (the tool_result or null, updated
	// when it arrives), sessionId.
	SlotConversationToolView = "conversation.toolview"
	// SlotSessionHeader: above the conversation. Props: sessionId, events
	// (every event so far, an array that grows), and an "event" DOM event
	// is dispatched on the element for each new one.
	SlotSessionHeader = "session.header"
)

var knownSlots = []string{SlotSidebar, SlotSettingsPluginItem, SlotConversationToolView, SlotSessionHeader}

// Component is one web component put into a slot.
type Component struct {
	// Slot is one of the Slot constants.
	Slot string `json:"slot"`
	// Element is the custom element's tag name (with a dash, e.g. "hello-toolview").
	Element string `json:"element"`
	// Module is the ES module's path inside the assets (e.g. "toolview.js");
	// the page imports it from /slots/PLUGIN/MODULE before creating elements.
	Module string `json:"-"`
	// Tool selects the tool a conversation.toolview renders; Plugin the
	// plugin whose card a settings.plugin.item replaces.
	Tool   string `json:"tool,omitempty"`
	Plugin string `json:"plugin,omitempty"`

	// URL and Owner are set by the registry.
	URL   string `json:"url"`
	Owner string `json:"owner"`
}

// Slots is the registry of slot components. Safe for concurrent use.
type Slots struct {
	mu     sync.Mutex
	comps  []Component
	assets map[string]fs.FS // by owner
}

func newSlots() *Slots { return &Slots{assets: map[string]fs.FS{}} }

var (
	// Compiled on first use: package init runs at every harness start.
	elementRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*-[a-z0-9-]+$`) })
	// Compiled on first use: package init runs at every harness start.
	ownerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`) })
)

// Add registers comp for the plugin owner whose embedded assets hold its
// module. It returns the function that removes it. Use [AddComponent] from
// a plugin, which removes it when the plugin unloads.
func (s *Slots) Add(owner string, assets fs.FS, comp Component) (remove func(), err error) {
	if !slices.Contains(knownSlots, comp.Slot) {
		return nil, fmt.Errorf("slot %q: not one of %v", comp.Slot, knownSlots)
	}
	if !elementRE().MatchString(comp.Element) {
		return nil, fmt.Errorf("element %q: a custom element name needs lower-case letters and a dash", comp.Element)
	}
	if !ownerRE().MatchString(owner) {
		return nil, fmt.Errorf("owner %q: lower-case letters, digits and dashes", owner)
	}
	if !fs.ValidPath(comp.Module) {
		return nil, fmt.Errorf("module %q: not a path inside the assets", comp.Module)
	}
	if _, err := fs.Stat(assets, comp.Module); err != nil {
		return nil, fmt.Errorf("module %q: %w", comp.Module, err)
	}
	if comp.Slot == SlotConversationToolView && comp.Tool == "" {
		return nil, errors.New("a conversation.toolview component names its Tool")
	}
	comp.Owner, comp.URL = owner, "/slots/"+owner+"/"+comp.Module
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.assets[owner]; ok && !sameFS(a, assets) {
		return nil, fmt.Errorf("owner %q already registered other assets", owner)
	}
	s.assets[owner] = assets
	s.comps = append(s.comps, comp)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		i := slices.IndexFunc(s.comps, func(c Component) bool { return c == comp })
		if i >= 0 {
			s.comps = slices.Delete(s.comps, i, i+1)
		}
		if !slices.ContainsFunc(s.comps, func(c Component) bool { return c.Owner == owner }) {
			delete(s.assets, owner)
		}
	}, nil
}

// sameFS reports whether a and b are the same file system value. Values
// of an uncomparable type (an fstest.MapFS) are the same when they are the
// same map (== would panic on them).
func sameFS(a, b fs.FS) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if ta.Comparable() {
		return a == b
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	switch va.Kind() {
	case reflect.Map, reflect.Slice, reflect.Func, reflect.Pointer:
		return va.Pointer() == vb.Pointer()
	}
	return false
}

// List returns the registered components in registration order.
func (s *Slots) List() []Component {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.comps)
}

// assetsOf returns the assets of owner.
func (s *Slots) assetsOf(owner string) (fs.FS, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.assets[owner]
	return a, ok
}

// AddComponent registers comp, with its module in assets, in the web
// server's slots for as long as plugin context c is active. The plugin
// injects "web" (or looks it up) and passes its own name as owner.
func AddComponent(c *core.Context, owner string, assets fs.FS, comp Component) error {
	srv, ok := core.Lookup(c, Key)
	if !ok {
		return errors.New("the web service is not active")
	}
	return c.Effect("slot "+comp.Slot+" "+comp.Element, func() (func(), error) {
		return srv.Slots().Add(owner, assets, comp)
	})
}
