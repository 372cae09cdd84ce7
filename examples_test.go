package harness_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Each module under examples/ (hello, wordcount, providers) is its own
// module that requires this one through a replace directive: its go.mod and
// go.sum must record every module this one's packages need (and its tests'
// dependencies), or a plain `go build` or `go test` there fails from a clean
// clone with "missing go.sum entry". (Fix: `GOFLAGS=-mod=mod go mod tidy`
// there.)
func TestExampleModuleResolvesWithoutUpdates(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no go command in CI")
		}
		t.Skip("no go command")
	}
	mods, err := filepath.Glob("examples/*/go.mod")
	if err != nil || len(mods) < 2 {
		t.Fatalf("example modules: %v %v", mods, err)
	}
	for _, mod := range mods {
		dir := filepath.Dir(mod)
		cmd := exec.Command(gobin, "list", "-mod=readonly", "-deps", "-test", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go list in %s: %v\n%s", dir, err, out)
		}
	}
}
