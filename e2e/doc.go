// Package e2e is the end-to-end suite on real projects: each test builds a
// small project of one ecosystem (a Go module, a Python package, a C
// project with a Makefile, a Node package, a git repository), runs the real
// harness binary on it with the embedded default manifest, headless and
// without -y, against a scripted model (services/llm/llmtest) that makes
// the tool calls a real model would (read the failing test, edit the fix,
// run the project's own test command, finish), and checks the outcome on
// disk, the exit code, that nothing was written outside the workspace and
// the sandbox's cache root, and that a second run of the tests is warm.
//
// The suite needs the toolchains it drives (go, python3 with pytest, make
// and a C compiler, node and npm, git, bubblewrap); a missing one skips
// its case, and fails it when CI is set (.ci/run installs them).
// The network cases (network_test.go) reach this machine's package
// registries (go env GOPROXY, npm config get registry) through the
// sandbox's proxy, and a loopback server the test runs.
// Every later capability adds its real-workflow case here.
package e2e
