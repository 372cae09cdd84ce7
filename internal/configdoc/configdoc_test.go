package configdoc_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/internal/configdoc"
	"github.com/dshgo/harness/plugins/std"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The compiled-in table is what the generator writes from the current
// comments: this fails when a config comment changed and
// `go generate ./core/manifest` was not run.
func TestGeneratedTableIsCurrent(t *testing.T) {
	want, err := configdoc.Generate("../..", std.Plugins())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../core/manifest/configdoc_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("core/manifest/configdoc_gen.go is stale: run `go generate ./core/manifest`")
	}
}

// A field's schema description is its Go doc comment, with its lines
// joined.
func TestSchemaDescriptionIsTheGoComment(t *testing.T) {
	s := manifest.ConfigSchema(toolbash.Plugin)
	p, ok := s.Properties.Get("timeout")
	if !ok || p.Description != "Timeout is the default deadline of a command (2m)." {
		t.Fatalf("timeout description %q", p.Description)
	}
	p, _ = s.Properties.Get("cwd")
	if !strings.HasPrefix(p.Description, "Cwd is the default working directory; empty means the process working directory") {
		t.Fatalf("cwd description %q", p.Description)
	}
}
