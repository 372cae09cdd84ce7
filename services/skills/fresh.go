package skills

import (
	"os"
	"time"
)

// watched is one path a catalog was read from: absent, or present with a
// size and a modification time. A new skill folder changes its root's
// modification time; a new SKILL.md, its folder's; an edit, the file's.
type watched struct {
	path    string
	exists  bool
	size    int64
	modTime time.Time
}

func (c *Catalog) watch(path string) {
	w := watched{path: path}
	if st, err := os.Stat(path); err == nil {
		w.exists, w.size, w.modTime = true, st.Size(), st.ModTime()
	}
	c.deps = append(c.deps, w)
}

func (w watched) current() bool {
	st, err := os.Stat(w.path)
	if err != nil {
		return !w.exists
	}
	return w.exists && st.Size() == w.size && st.ModTime().Equal(w.modTime)
}

// Fresh reports whether no directory or file the catalog was read from
// appeared, went away or changed since: a few stat calls, no reads.
func (c *Catalog) Fresh() bool {
	for _, d := range c.deps {
		if !d.current() {
			return false
		}
	}
	return true
}
