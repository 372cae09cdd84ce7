package permission

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// commandPart is one simple command found in a shell command line, with the
// textual forms a rule may be matched against. Forms[0] is the command as
// written (normalized spacing, redirections kept); the other forms are the
// same command with quotes removed, with leading assignments dropped, and
// with wrapper programs (sudo, env, nohup, timeout …) peeled off.
//
// Matching is conservative in both directions: a deny or ask rule matches a
// part when it matches any form; an allow rule covers a part only when it
// matches every form.
type commandPart struct {
	Forms []string
	// Written is the whole statement as written, redirections included; deny
	// and ask rules also see it.
	Written string
	// Writes is set when the command redirects output into a file (`>`,
	// `>>`, `&>`, `>|`, `<>`; /dev/null and fd duplications excepted). An
	// allow rule covers such a part only if its pattern itself contains `>`,
	// so `bash(echo *)` does not allow `echo x > ~/.bashrc`.
	Writes bool
}

// maxShellNesting bounds the recursion into `bash -c '…'` and `eval …` strings.
const maxShellNesting = 4

// splitCommand splits a shell command line into its simple commands: the
// operands of `&&`, `||`, `;`, `|`, `&`, newlines, and every command nested
// inside subshells, braces, control structures, function bodies, command and
// process substitutions, and the string argument of `bash -c`, `sh -c` and
// `eval`. It uses a real POSIX/bash parser, so quotes and escapes never split
// a command. The boolean is false when the line does not parse; the caller
// then has only the raw text, which no allow rule may cover.
func splitCommand(line string) ([]commandPart, bool) {
	return splitCommandDepth(line, 0)
}

func splitCommandDepth(line string, depth int) ([]commandPart, bool) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, false
	}
	pr := syntax.NewPrinter(syntax.SingleLine(true))
	printNode := func(n syntax.Node) string { return printWith(pr, n) }
	var parts []commandPart
	ok := true
	syntax.Walk(file, func(node syntax.Node) bool {
		stmt, isStmt := node.(*syntax.Stmt)
		if !isStmt || stmt.Cmd == nil || isContainer(stmt.Cmd) {
			return true
		}
		part, nested, nestedOK := describeStmt(stmt, depth, printNode)
		parts = append(parts, part)
		parts = append(parts, nested...)
		ok = ok && nestedOK
		return true
	})
	return parts, ok
}

// isContainer reports whether cmd only groups other statements (which the walk
// visits on its own) rather than running something itself.
func isContainer(cmd syntax.Command) bool {
	switch cmd.(type) {
	case *syntax.BinaryCmd, *syntax.Subshell, *syntax.Block, *syntax.IfClause,
		*syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause, *syntax.FuncDecl,
		*syntax.TimeClause:
		return true
	}
	return false
}

// describeStmt builds the forms of one simple statement, plus the parts of a
// shell string it hands to `bash -c` or `eval`.
func describeStmt(stmt *syntax.Stmt, depth int, printNode func(syntax.Node) string) (commandPart, []commandPart, bool) {
	written := printNode(stmt)
	forms := []string{printNode(stmt.Cmd)}
	writes := writesFile(stmt.Redirs, printNode)
	call, isCall := stmt.Cmd.(*syntax.CallExpr)
	if !isCall || len(call.Args) == 0 {
		return commandPart{Forms: forms, Written: written, Writes: writes}, nil, true
	}
	argv := make([]string, len(call.Args))
	for i, w := range call.Args {
		argv[i] = unquoteWord(w, printNode)
	}
	forms = appendForm(forms, strings.Join(argv, " "))
	inner := peelWrappers(argv)
	forms = appendForm(forms, strings.Join(inner, " "))
	if len(inner) > 0 && strings.Contains(inner[0], "/") {
		// `/bin/rm -rf x` is `rm -rf x` for a deny rule; an allow rule must
		// match every form, so this never lets `bash(rm *)` cover a path.
		forms = appendForm(forms, strings.Join(append([]string{path.Base(inner[0])}, inner[1:]...), " "))
	}

	part := commandPart{Forms: forms, Written: written, Writes: writes}
	script, hasScript := shellScriptArg(inner)
	if !hasScript {
		return part, nil, true
	}
	if depth >= maxShellNesting {
		return part, nil, false
	}
	nested, ok := splitCommandDepth(script, depth+1)
	if !ok {
		nested = []commandPart{{Forms: []string{script}}}
	}
	return part, nested, ok
}

// writesFile reports whether any redirection writes to a file.
func writesFile(redirs []*syntax.Redirect, printNode func(syntax.Node) string) bool {
	for _, r := range redirs {
		target := ""
		if r.Word != nil {
			target = unquoteWord(r.Word, printNode)
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
			syntax.RdrAllClob, syntax.AppAllClob, syntax.RdrInOut:
			if target != "/dev/null" {
				return true
			}
		case syntax.DplOut:
			if strings.Trim(target, "0123456789") != "" && target != "-" {
				return true
			}
		}
	}
	return false
}

func appendForm(forms []string, f string) []string {
	for _, have := range forms {
		if have == f {
			return forms
		}
	}
	return append(forms, f)
}

// printWith prints a syntax node on one line with normalized spacing.
func printWith(pr *syntax.Printer, node syntax.Node) string {
	var b strings.Builder
	if err := pr.Print(&b, node); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

// unquoteWord returns the word with its quoting removed when it is made only
// of literals and quoted literals; otherwise (parameter expansions, command
// substitutions …) the word as written.
func unquoteWord(w *syntax.Word, printNode func(syntax.Node) string) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return printNode(w)
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				lit, isLit := inner.(*syntax.Lit)
				if !isLit {
					return printNode(w)
				}
				b.WriteString(lit.Value)
			}
		default:
			return printNode(w)
		}
	}
	return b.String()
}

// unescapeLit drops the backslashes of an unquoted literal (`r\m` runs `rm`).
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// wrappers are programs that run their arguments as another command.
var wrappers = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "nice": true, "ionice": true,
	"time": true, "timeout": true, "command": true, "exec": true, "builtin": true,
	"xargs": true, "stdbuf": true, "setsid": true, "chronic": true,
}

// peelWrappers drops leading wrapper programs, their options, and `VAR=value`
// operands (env), so `sudo -n timeout 5 rm -rf x` yields `rm -rf x`. The
// result is best-effort: it only adds forms for deny rules to see and never
// widens what an allow rule covers.
func peelWrappers(argv []string) []string {
	for len(argv) > 0 && wrappers[path.Base(argv[0])] {
		argv = argv[1:]
		for len(argv) > 0 && (strings.HasPrefix(argv[0], "-") || strings.Contains(argv[0], "=") || isDuration(argv[0])) {
			argv = argv[1:]
		}
	}
	return argv
}

// isDuration reports whether s looks like a timeout operand (`5`, `2.5s`, `1m`).
func isDuration(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	return strings.Trim(s, "0123456789.smhd") == ""
}

// shells run their `-c` argument as a command line.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true}

// shellScriptArg returns the command line that argv hands to a shell: the
// argument after `-c` (also in combined flags such as `-lc`) for a shell, or
// the joined arguments of `eval`.
func shellScriptArg(argv []string) (string, bool) {
	if len(argv) < 2 {
		return "", false
	}
	name := path.Base(argv[0])
	if name == "eval" {
		return strings.Join(argv[1:], " "), true
	}
	if !shells[name] {
		return "", false
	}
	for i := 1; i < len(argv)-1; i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return "", false
		}
		if strings.Contains(a, "c") {
			return argv[i+1], true
		}
	}
	return "", false
}
