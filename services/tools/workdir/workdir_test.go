package workdir

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWithAndOr(t *testing.T) {
	ctx := context.Background()
	if got := Or(ctx, "/fallback"); got != "/fallback" {
		t.Fatal(got)
	}
	if With(ctx, "") != ctx {
		t.Fatal("empty dir must leave ctx unchanged")
	}
	if got := Or(With(ctx, "/a/b/../c"), "/fallback"); got != "/a/c" {
		t.Fatal(got)
	}
	wd, _ := os.Getwd()
	if got, ok := From(With(ctx, "rel")); !ok || got != filepath.Join(wd, "rel") {
		t.Fatal(got)
	}
}

func TestDefault(t *testing.T) {
	wd, _ := os.Getwd()
	if got, err := Default(""); err != nil || got != wd {
		t.Fatalf("Default(\"\") = %q, %v", got, err)
	}
	if got, _ := Default("sub"); got != filepath.Join(wd, "sub") {
		t.Fatalf("Default(sub) = %q", got)
	}
	if got, _ := Default("/abs/dir"); got != "/abs/dir" {
		t.Fatalf("Default(/abs/dir) = %q", got)
	}
}
