package subprocess

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func tempOpener(t *testing.T) func(string) (*os.File, string, error) {
	dir := t.TempDir()
	n := 0
	return func(label string) (*os.File, string, error) {
		n++
		p := filepath.Join(dir, strconv.Itoa(n)+"-"+label)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return f, p, err
	}
}

func TestCollectedOutputReadFromIncrementsAndLossy(t *testing.T) {
	c := newCollectedOutput("stdout", 10, 100, tempOpener(t))
	c.Write([]byte("aaaaa"))
	if got := c.ReadFrom(0); got.Text != "aaaaa" || got.NextOffset != 5 || got.Lossy || got.SpillPath != "" {
		t.Fatalf("read 0 = %+v", got)
	}
	c.Write([]byte("bbbbb"))
	if got := c.ReadFrom(5); got.Text != "bbbbb" || got.NextOffset != 10 || got.Lossy {
		t.Fatalf("read 5 = %+v", got)
	}
	c.Write(bytes.Repeat([]byte("c"), 20))
	got := c.ReadFrom(10)
	if got.Text != "cccccccccc" || got.NextOffset != 30 || !got.Lossy || got.SpillPath == "" {
		t.Fatalf("read 10 = %+v", got)
	}
	c.seal()
	b, err := os.ReadFile(got.SpillPath)
	if err != nil || string(b) != "aaaaabbbbb"+string(bytes.Repeat([]byte("c"), 20)) {
		t.Fatalf("spill = %q, %v", b, err)
	}
}

func TestCollectedOutputCaps(t *testing.T) {
	tests := []struct {
		name       string
		max, spill int64
		chunks     []string
		text       string
		truncated  bool
		spillFile  string // "" = no file
		capped     bool
	}{
		{"exact fit makes no file", 5, 100, []string{"abcde"}, "abcde", false, "", false},
		{"overflow spills whole stream", 4, 100, []string{"ab", "cdef"}, "cdef", true, "abcdef", false},
		{"first overflow already past spill cap", 4, 4, []string{"abcdefgh"}, "efgh", true, "", true},
		{"spill equal to cap is kept", 4, 8, []string{"abcdefgh"}, "efgh", true, "abcdefgh", false},
		{"spill discarded past cap, tail keeps working", 2, 5, []string{"abc", "def", "gh"}, "gh", true, "", true},
		{"no spill configured", 3, 0, []string{"abcdef"}, "def", true, "", false},
		{"chunk larger than cap", 3, 0, []string{"a", "bcdefgh", "i"}, "ghi", true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCollectedOutput("stdout", tt.max, tt.spill, tempOpener(t))
			for _, ch := range tt.chunks {
				c.Write([]byte(ch))
			}
			c.seal()
			r := c.ReadFrom(0)
			if r.Text != tt.text || r.Lossy != tt.truncated || c.Truncated() != tt.truncated || c.SpillCapped() != tt.capped {
				t.Fatalf("got %+v truncated=%v capped=%v", r, c.Truncated(), c.SpillCapped())
			}
			if tt.spillFile == "" {
				if r.SpillPath != "" {
					t.Fatalf("unexpected spill file %s", r.SpillPath)
				}
				return
			}
			b, err := os.ReadFile(r.SpillPath)
			if err != nil || string(b) != tt.spillFile {
				t.Fatalf("spill %q, %v; want %q", b, err, tt.spillFile)
			}
		})
	}
}

func TestCollectedOutputTailMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, limit := range []int64{1, 7, 64, 4096} {
		c := newCollectedOutput("stdout", limit, 0, nil)
		var all []byte
		for range 500 {
			chunk := make([]byte, rng.IntN(int(limit)*2+3))
			for i := range chunk {
				chunk[i] = 'a' + byte(rng.IntN(26))
			}
			c.Write(chunk)
			all = append(all, chunk...)
			want := all[max(0, len(all)-int(limit)):]
			if got := c.ReadFrom(0).Text; got != string(want) {
				t.Fatalf("limit %d after %d bytes: tail %q, want %q", limit, len(all), got, want)
			}
		}
		if cap(c.buf) > int(limit) {
			t.Fatalf("limit %d: buffer capacity %d exceeds the cap", limit, cap(c.buf))
		}
	}
}

func TestCollectedOutputNeverSplitsUTF8(t *testing.T) {
	// "é" is 2 bytes, "€" is 3 bytes.
	c := newCollectedOutput("stdout", 4, 0, nil)
	c.Write([]byte("a€"))    // a E2 82 AC
	c.Write([]byte("é\xe2")) // tail window: AC C3 A9 E2 (cut € head, open €)
	r := c.ReadFrom(0)
	if r.Text != "é" || !r.Lossy || r.NextOffset != 6 {
		t.Fatalf("open stream read = %+v", r)
	}
	c.Write([]byte("\x82\xac"))
	if r := c.ReadFrom(6); r.Text != "€" || r.NextOffset != 9 || r.Lossy {
		t.Fatalf("continued read = %+v", r)
	}
	c2 := newCollectedOutput("stdout", 10, 0, nil)
	c2.Write([]byte("ok\xe2\x82"))
	c2.seal()
	if r := c2.ReadFrom(0); r.Text != "ok\xe2\x82" || r.NextOffset != 4 {
		t.Fatalf("sealed stream hands out its genuine end: %+v", r)
	}
	if r := c2.ReadFrom(99); r.Text != "" || r.NextOffset != 4 || r.Lossy {
		t.Fatalf("read past end = %+v", r)
	}
}
