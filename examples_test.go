package harness_test

import (
	"os"
	"os/exec"
	"testing"
)

// examples/hello is its own module that requires this one through a replace
// directive: its go.mod and go.sum must record every module this one's
// packages need, or a plain `go build` there fails from a clean clone with
// "missing go.sum entry". (Fix: `GOFLAGS=-mod=mod go build ./...` there.)
func TestExampleModuleResolvesWithoutUpdates(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "list", "-mod=readonly", "-deps", "./...")
	cmd.Dir = "examples/hello"
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go list in examples/hello: %v\n%s", err, out)
	}
}
