package e2e

import (
	"strings"
	"testing"
)

// A Go module under the default manifest: the model's edit breaks the
// build and the edit's result carries gopls's compiler error (the lsp row,
// its server in the sandbox); the model fixes it (that result carries no
// diagnostics) and `go test` passes.
func TestGoEditResultCarriesLSPDiagnostics(t *testing.T) {
	t.Parallel()
	needTools(t, "bwrap", "go", "gopls")
	p := newProject(t, map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum([]int{1, 2, 3}) != 6 {\n\t\tt.Fatal(Sum([]int{1, 2, 3}))\n\t}\n}\n",
	})
	o := p.run("Rename the accumulator.",
		read("c1", "calc.go"),
		edit("c2", "calc.go", "\tt := 0\n", "\ttotal := 0\n"),
		answer("Renamed."),
	)
	r := o.toolResult(t, "c2")
	if !strings.Contains(r, "LSP diagnostics for calc.go:") || !strings.Contains(r, "calc.go:7:3: error: undefined: t (compiler)") {
		t.Fatalf("the breaking edit's result:\n%s", r)
	}
	o = p.run("Fix it.",
		read("c1", "calc.go"),
		edit("c2", "calc.go", "\ttotal := 0\n", "\tt := 0\n"),
		bash("c3", "go test ./...", "run the tests"),
		answer("Fixed."),
	)
	o.mustSucceed(t, "Fixed.")
	if r := o.toolResult(t, "c2"); strings.Contains(r, "LSP diagnostics") {
		t.Fatalf("the fixing edit's result:\n%s", r)
	}
	if r := o.toolResult(t, "c3"); !strings.Contains(r, "ok") {
		t.Fatalf("go test after the fix:\n%s", r)
	}
}
