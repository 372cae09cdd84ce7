package permission

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// commandPart is one simple command found in a shell command line, with the
// textual forms a rule may be matched against. Forms[0] is the command as
// written (normalized spacing, redirections dropped); the other forms are the
// same command with quoting resolved (quotes removed, `$'…'` decoded,
// backslashes dropped), and with wrapper programs (sudo, env, nohup,
// timeout …) peeled off.
//
// Matching is conservative in both directions: a deny or ask rule matches a
// part when it matches any form or any of Extra; an allow rule covers a part
// only when it matches every form of Forms.
type commandPart struct {
	Forms []string
	// Extra are forms only deny and ask rules see: the program given by its
	// path reduced to its name, the command after every argument of a wrapper (so `timeout --weird X rm -rf v` still shows
	// `rm -rf v` whatever the wrapper's options), brace expansions, and,
	// added by the policy, arguments resolved against the call's workdir.
	Extra []string
	// Argvs are the command's argument vectors (quoting resolved, one per
	// wrapper stage, program reduced to its name) for the option-aware
	// matching of deny and ask rules (see optionPattern).
	Argvs [][]string
	// Written is the whole statement as written, redirections included; deny
	// and ask rules also see it, and an allow rule for a part that
	// redirects must match it.
	Written string
	// Writes is set when the command redirects output into a file (`>`,
	// `>>`, `&>`, `>|`, `<>`; /dev/null and fd duplications excepted).
	// Reads is set when it reads a file through `<` or `<>` (also
	// `$(< FILE)`). An allow rule covers such a part only if its pattern
	// itself names the redirection (contains `>` or `<`), so `bash(echo *)`
	// does not allow `echo x > ~/.bashrc` nor `echo "$(< ~/.ssh/id_rsa)"`.
	Writes, Reads bool
	// WriteTargets and ReadTargets are the static targets of those
	// redirections (quoting resolved, `~/` kept), for file deny rules.
	WriteTargets, ReadTargets []string
	// Dynamic is set when an argument is not static (`rm $opt v`): a deny
	// or ask rule that names options cannot be checked against such a part.
	Dynamic bool
	// Unknown, when set, says why no rule can know what this part runs: a
	// program name that is not static (`$x`, `$(…)`), a script handed to a
	// shell that is not literal, a line that does not parse. Such a part is
	// never covered by allow rules and is asked in every mode.
	Unknown string
}

// maxShellNesting bounds the recursion into nested scripts (`bash -c '…'`,
// `eval …`, heredocs fed to a shell).
const maxShellNesting = 4

// splitCommand analyses a shell command line into its simple commands: the
// operands of `&&`, `||`, `;`, `|`, `&`, newlines, and every command nested
// inside subshells, braces, control structures, function bodies, command,
// arithmetic and process substitutions, and the scripts handed to a shell
// (`bash -c`, a pipe, heredoc or here-string into a shell, `eval`, `trap`,
// `source`, aliases). It uses a real bash parser, so quotes and escapes never
// split a command. The boolean is false when the line does not parse; the
// single part returned then is unknown.
func splitCommand(line string) ([]commandPart, bool) {
	a := &analyzer{
		printer:   syntax.NewPrinter(syntax.SingleLine(true)),
		stdinFrom: map[*syntax.Stmt]*syntax.Stmt{},
		seen:      map[string]bool{},
	}
	if !a.script(line, 0) {
		// bash may still run it: `echo $(( $(rm -rf v) 0 ))` does not parse
		// (the substitution expands before the arithmetic is read), yet runs
		// `rm -rf v`. Deny and ask rules see every command substitution
		// found in the text.
		a.parts = []commandPart{{Forms: []string{strings.TrimSpace(line)},
			Unknown: "the command line does not parse as bash"}}
		for _, sub := range substitutionTexts(line) {
			a.nested(sub, 1, "a command substitution in a line that does not parse")
		}
		return a.parts, false
	}
	return a.parts, true
}

// maxRecoveredSubstitutions bounds the substitutions substitutionTexts
// returns.
const maxRecoveredSubstitutions = 64

// substitutionTexts returns the bodies of the command substitutions
// (`$(…)`, backquotes) in a line that does not parse, found by balancing
// parentheses outside single quotes; those nested in an arithmetic
// expansion `$(( … ))` too. It is a fallback for deny and ask rules only.
func substitutionTexts(line string) []string {
	var out []string
	var scan func(s string, depth int)
	scan = func(s string, depth int) {
		for i := 0; i < len(s) && len(out) < maxRecoveredSubstitutions; i++ {
			switch {
			case s[i] == '\\':
				i++
			case s[i] == '\'':
				if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
					i += j + 1
				}
			case s[i] == '`':
				if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
					out = append(out, s[i+1:i+1+j])
					i += j + 1
				}
			case s[i] == '$' && i+1 < len(s) && s[i+1] == '(':
				end := closingParen(s, i+1)
				if end < 0 {
					end = len(s)
				}
				body := s[i+2 : max(i+2, end)]
				if strings.HasPrefix(body, "(") && depth < maxShellNesting {
					scan(body, depth+1) // arithmetic: look inside
				} else if body != "" {
					out = append(out, body)
					if depth < maxShellNesting {
						scan(body, depth+1)
					}
				}
				i = end
			}
		}
	}
	scan(line, 0)
	return out
}

// closingParen returns the index of the parenthesis that closes the one at
// s[open], or -1.
func closingParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// analyzer accumulates the parts of one command line.
type analyzer struct {
	printer *syntax.Printer
	parts   []commandPart
	// stdinFrom maps the first statement of a pipe's right side to the
	// statement whose output feeds it.
	stdinFrom map[*syntax.Stmt]*syntax.Stmt
	seen      map[string]bool // nested scripts already analysed, by depth:text
}

func newParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// script parses src and adds its parts; false when it does not parse.
func (a *analyzer) script(src string, depth int) bool {
	file, err := newParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return false
	}
	syntax.Walk(file, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			a.stdinFrom[firstStmt(b.Y)] = lastStmt(b.X)
		}
		return true
	})
	a.promptExpansions(file, depth)
	syntax.Walk(file, func(n syntax.Node) bool {
		stmt, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		if stmt.Cmd != nil && isContainer(stmt.Cmd) {
			if len(stmt.Redirs) > 0 {
				a.containerRedirects(stmt)
			}
			return true
		}
		a.stmt(stmt, depth)
		return true
	})
	return true
}

// promptExpansions analyses `${x@P}`: prompt expansion runs the command
// substitutions in the variable's value. The values the script assigns to
// x literally are analysed as the commands they run; a variable the script
// never assigns literally is an unknown part.
func (a *analyzer) promptExpansions(file *syntax.File, depth int) {
	var uses []*syntax.ParamExp
	values := map[string][]string{}
	literal := map[string]bool{}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P") && n.Param != nil {
				uses = append(uses, n)
			}
		case *syntax.Assign:
			if n.Name == nil {
				return true
			}
			name := n.Name.Value
			if _, seen := literal[name]; !seen {
				literal[name] = true
			}
			if n.Value == nil {
				return true
			}
			if w := a.word(n.Value); w.static {
				values[name] = append(values[name], w.val)
			} else {
				literal[name] = false
			}
		}
		return true
	})
	for _, use := range uses {
		name := use.Param.Value
		vals := values[name]
		if len(vals) == 0 || !literal[name] {
			a.parts = append(a.parts, commandPart{Forms: []string{a.print(use)},
				Unknown: "the prompt expansion " + a.print(use) + " runs the commands in the value of " + name + ", which is not literal"})
			continue
		}
		for _, v := range vals {
			a.promptValue(v, depth, a.print(use))
		}
	}
}

// promptValue analyses the command substitutions a prompt expansion of v
// runs.
func (a *analyzer) promptValue(v string, depth int, what string) {
	doc, err := newParser().Document(strings.NewReader(v))
	if err != nil {
		a.parts = append(a.parts, commandPart{Forms: []string{v}, Unknown: "the value " + what + " expands does not parse"})
		return
	}
	syntax.Walk(doc, func(n syntax.Node) bool {
		if cs, ok := n.(*syntax.CmdSubst); ok {
			for _, st := range cs.Stmts {
				a.nested(a.print(st), depth+1, "a command the prompt expansion "+what+" runs")
			}
			return false
		}
		return true
	})
}

// nested analyses a script a command hands to a shell; an unparsable or too
// deeply nested script is an unknown part.
func (a *analyzer) nested(src string, depth int, why string) {
	key := string(rune('0'+depth)) + src
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	if depth > maxShellNesting {
		a.parts = append(a.parts, commandPart{Forms: []string{src}, Unknown: why + " is nested too deeply to analyse"})
		return
	}
	if !a.script(src, depth) {
		a.parts = append(a.parts, commandPart{Forms: []string{src}, Unknown: why + " does not parse as bash"})
	}
}

func firstStmt(s *syntax.Stmt) *syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		return firstStmt(b.X)
	}
	return s
}

func lastStmt(s *syntax.Stmt) *syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		return lastStmt(b.Y)
	}
	return s
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

func (a *analyzer) print(n syntax.Node) string {
	var b strings.Builder
	if err := a.printer.Print(&b, n); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

// containerRedirects adds a part for the redirections of a group
// (`{ …; } > f`, `( … ) < f`): its commands are parts of their own.
func (a *analyzer) containerRedirects(stmt *syntax.Stmt) {
	var texts []string
	for _, r := range stmt.Redirs {
		texts = append(texts, a.print(r))
	}
	part := commandPart{Forms: []string{strings.Join(texts, " ")}, Written: strings.Join(texts, " ")}
	a.redirects(&part, stmt.Redirs)
	a.parts = append(a.parts, part)
}

// redirects records the file reads and writes of a statement's redirections.
func (a *analyzer) redirects(part *commandPart, redirs []*syntax.Redirect) {
	for _, r := range redirs {
		var target word
		if r.Word != nil {
			target = a.word(r.Word)
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll,
			syntax.RdrAllClob, syntax.AppAllClob:
			if target.val != "/dev/null" {
				part.Writes = true
				if target.static {
					part.WriteTargets = append(part.WriteTargets, target.val)
				}
			}
		case syntax.RdrInOut:
			part.Writes, part.Reads = true, true
			if target.static {
				part.WriteTargets = append(part.WriteTargets, target.val)
				part.ReadTargets = append(part.ReadTargets, target.val)
			}
		case syntax.RdrIn:
			if target.val != "/dev/null" {
				part.Reads = true
				if target.static {
					part.ReadTargets = append(part.ReadTargets, target.val)
				}
			}
		case syntax.DplOut:
			if strings.Trim(target.val, "0123456789") != "" && target.val != "-" {
				part.Writes = true
				if target.static {
					part.WriteTargets = append(part.WriteTargets, target.val)
				}
			}
		}
	}
}

// stmt adds the part of one simple statement and analyses the scripts it
// hands to a shell.
func (a *analyzer) stmt(stmt *syntax.Stmt, depth int) {
	part := commandPart{Written: a.print(stmt)}
	a.redirects(&part, stmt.Redirs)
	call, isCall := stmt.Cmd.(*syntax.CallExpr)
	switch {
	case stmt.Cmd == nil: // `$(< FILE)`, `> FILE`
		part.Forms = []string{part.Written}
		a.parts = append(a.parts, part)
		return
	case !isCall || len(call.Args) == 0:
		part.Forms = []string{a.print(stmt.Cmd)}
		a.parts = append(a.parts, part)
		a.assignments(len(a.parts)-1, stmt.Cmd, nil, depth)
		return
	}
	words := make([]word, len(call.Args))
	argv := make([]string, len(call.Args))
	for i, w := range call.Args {
		words[i] = a.word(w)
		argv[i] = words[i].val
		part.Dynamic = part.Dynamic || !words[i].static
	}
	part.Forms = appendForm([]string{a.print(stmt.Cmd)}, strings.Join(argv, " "))
	precise, loose := commandStarts(words)
	for _, i := range precise {
		sub := reduceProgram(argv[i:])
		// A program given by its path is also its name for deny rules only:
		// `bash(git *)` must not allow `/tmp/x/git status`.
		part.Forms = appendForm(part.Forms, strings.Join(argv[i:], " "))
		part.Extra = appendForm(part.Extra, strings.Join(sub, " "))
		part.Argvs = append(part.Argvs, sub)
		if why := programUnknown(words[i]); why != "" && part.Unknown == "" {
			part.Unknown = why
		}
	}
	for _, i := range loose {
		sub := reduceProgram(argv[i:])
		part.Extra = appendForm(appendForm(part.Extra, strings.Join(argv[i:], " ")), strings.Join(sub, " "))
		part.Argvs = append(part.Argvs, sub)
	}
	for _, argv := range part.Argvs {
		if g := stripGitGlobals(argv); g != nil {
			part.Extra = appendForm(part.Extra, strings.Join(g, " "))
			part.Argvs = append(part.Argvs, g)
			break
		}
	}
	for _, variant := range a.braceVariants(call.Args) {
		part.Extra = appendForm(part.Extra, strings.Join(variant, " "))
		part.Argvs = append(part.Argvs, reduceProgram(variant))
	}
	a.parts = append(a.parts, part)
	idx := len(a.parts) - 1
	a.assignments(idx, stmt.Cmd, words, depth)

	for _, i := range precise {
		a.scriptsOf(idx, stmt, words[i:], depth)
		a.wrapperScripts(idx, words[i:], depth)
	}
	for _, i := range loose {
		a.scriptsOf(-1, stmt, words[i:], depth)
	}
}

// markUnknown marks part idx unknown, keeping the first reason; idx < 0
// (a loose wrapper stage, see commandStarts) marks nothing.
func (a *analyzer) markUnknown(idx int, why string) {
	if idx >= 0 && a.parts[idx].Unknown == "" {
		a.parts[idx].Unknown = why
	}
}

// scriptsOf analyses what a command starting at words[0] runs as a script.
func (a *analyzer) scriptsOf(idx int, stmt *syntax.Stmt, words []word, depth int) {
	if len(words) == 0 || !words[0].static {
		return
	}
	name := path.Base(words[0].val)
	switch {
	case shells[name]:
		kind, i := shellOperand(words)
		switch kind {
		case operandScript:
			a.scriptWord(idx, words[i], depth, "the script given to "+name+" -c")
		case operandFile:
			a.sourced(idx, stmt, words[i], depth, "the script "+name+" runs")
		case operandStdin:
			a.stdinScript(idx, stmt, depth, "the script "+name+" reads from its standard input")
		}
	case name == "source" || name == ".":
		if len(words) > 1 {
			a.sourced(idx, stmt, words[1], depth, "the file "+name+" reads")
		}
	case name == "eval":
		var parts []string
		for _, w := range words[1:] {
			if !w.static {
				a.markUnknown(idx, "eval runs text that is not literal ("+w.val+")")
				return
			}
			parts = append(parts, w.val)
		}
		if len(parts) > 0 {
			a.nested(strings.Join(parts, " "), depth+1, "the text given to eval")
		}
	case name == "trap":
		rest := words[1:]
		for len(rest) > 0 && (rest[0].val == "-p" || rest[0].val == "-l" || rest[0].val == "-P" || rest[0].val == "--") {
			rest = rest[1:]
		}
		if len(rest) > 0 && rest[0].val != "-" {
			a.scriptWord(idx, rest[0], depth, "the trap action")
		}
	case name == "alias":
		for _, w := range words[1:] {
			if _, value, ok := strings.Cut(w.val, "="); ok {
				if !w.static {
					a.markUnknown(idx, "the alias value is not literal ("+w.val+")")
					continue
				}
				a.nested(value, depth+1, "the alias value")
			}
		}
	}
}

// scriptWord analyses a word that is a script: literal → its parts; not
// literal → unknown.
func (a *analyzer) scriptWord(idx int, w word, depth int, what string) {
	if !w.static {
		a.markUnknown(idx, what+" is not literal ("+w.val+")")
		return
	}
	a.nested(w.val, depth+1, what)
}

// sourced analyses a script file operand: standard input, a process
// substitution with literal output, or a named file (governed by the
// command's own form); anything else is unknown.
func (a *analyzer) sourced(idx int, stmt *syntax.Stmt, w word, depth int, what string) {
	switch w.val {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		a.stdinScript(idx, stmt, depth, what)
		return
	}
	if w.static {
		return
	}
	if len(w.node.Parts) == 1 {
		if ps, ok := w.node.Parts[0].(*syntax.ProcSubst); ok && ps.Op == syntax.CmdIn && len(ps.Stmts) == 1 {
			if text, ok := a.literalOutput(ps.Stmts[0]); ok {
				a.nested(text, depth+1, what)
				return
			}
		}
	}
	a.markUnknown(idx, what+" is not literal ("+w.val+")")
}

// stdinScript analyses the script a shell reads from its standard input: a
// literal heredoc or here-string, or the literal output of `echo`/`printf`
// piped into it; anything else is unknown.
func (a *analyzer) stdinScript(idx int, stmt *syntax.Stmt, depth int, what string) {
	if text, ok := a.stdinText(stmt); ok {
		a.nested(text, depth+1, what)
		return
	}
	a.markUnknown(idx, what+" is not literal")
}

// stdinText is the literal text stmt reads on its standard input, if known.
func (a *analyzer) stdinText(stmt *syntax.Stmt) (string, bool) {
	if stmt == nil {
		return "", false
	}
	for i := len(stmt.Redirs) - 1; i >= 0; i-- {
		r := stmt.Redirs[i]
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			return a.heredoc(r)
		case syntax.WordHdoc:
			w := a.word(r.Word)
			return w.val + "\n", w.static
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			return "", false
		}
	}
	if from, ok := a.stdinFrom[stmt]; ok {
		return a.literalOutput(from)
	}
	return "", false
}

// heredoc returns the body of a here-document when it is literal: a quoted
// delimiter, or a body without expansions.
func (a *analyzer) heredoc(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(lit.Value)
	}
	return b.String(), true
}

// literalOutput is what stmt writes to its standard output when that is
// literal: `echo`/`printf` of static words, `cat` of a literal heredoc or
// here-string.
func (a *analyzer) literalOutput(stmt *syntax.Stmt) (string, bool) {
	call, ok := stmt.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", false
	}
	var argv []string
	for _, w := range call.Args {
		v := a.word(w)
		if !v.static {
			return "", false
		}
		argv = append(argv, v.val)
	}
	switch path.Base(argv[0]) {
	case "echo":
		args, escapes := argv[1:], false
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
			escapes = escapes || strings.Contains(args[0], "e")
			args = args[1:]
		}
		text := strings.Join(args, " ") + "\n"
		if escapes {
			text, _, _ = expand.Format(emptyConfig(), "%b", []string{text})
		}
		return text, true
	case "printf":
		if len(argv) < 2 {
			return "", false
		}
		text, _, err := expand.Format(emptyConfig(), argv[1], argv[2:])
		return text, err == nil
	case "cat":
		if len(argv) == 1 {
			return a.stdinText(stmt)
		}
	}
	return "", false
}

// word is one shell word: its value with quoting resolved when static, else
// as written.
type word struct {
	val    string
	static bool
	node   *syntax.Word
}

// emptyConfig is an expansion config with an empty environment; a fresh one
// per call (expand mutates the config it is given).
func emptyConfig() *expand.Config {
	return &expand.Config{Env: expand.FuncEnviron(func(string) string { return "" })}
}

// word resolves w's quoting when it is made only of literals, quoted
// literals and `$'…'` strings; otherwise (parameter expansions, command
// substitutions …) it returns the word as written, not static.
func (a *analyzer) word(w *syntax.Word) word {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				lit, isLit := inner.(*syntax.Lit)
				if !isLit {
					return word{val: a.print(w), node: w}
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return word{val: a.print(w), node: w}
		}
	}
	return word{val: b.String(), static: true, node: w}
}

// ansiC decodes the body of a `$'…'` string as bash does (`\x72m` is `rm`);
// the text ends at a NUL byte.
func ansiC(s string) string {
	out, _, err := expand.Format(emptyConfig(), s, nil)
	if err != nil {
		return s
	}
	if i := strings.IndexByte(out, 0); i >= 0 {
		out = out[:i]
	}
	return out
}

// unescapeLit drops the backslashes of an unquoted literal (`r\m` runs `rm`)
// and backslash-newline line continuations.
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble drops the backslashes bash drops inside double quotes
// (before `$`, backquote, `"`, `\` and newline).
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// programUnknown says why w, in command position, does not name a program
// statically ("" when it does): an expansion, a glob or a brace expansion.
func programUnknown(w word) string {
	if !w.static {
		return "the program name " + w.val + " is not static"
	}
	for _, p := range w.node.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		if strings.ContainsAny(lit.Value, "*?[") || hasBraces(lit.Value) {
			return "the program name " + w.val + " is expanded by the shell (glob or braces)"
		}
	}
	return ""
}

func hasBraces(s string) bool {
	open := strings.IndexByte(s, '{')
	return open >= 0 && strings.IndexByte(s[open:], '}') > 0 &&
		(strings.Contains(s[open:], ",") || strings.Contains(s[open:], ".."))
}

// braceVariants returns the argument vector with brace expansions expanded
// (`rm -{r,f} v` → `rm -r -f v`), when any argument has one; at most 64
// words are produced per argument.
func (a *analyzer) braceVariants(args []*syntax.Word) [][]string {
	any := false
	for _, w := range args {
		for _, p := range w.Parts {
			if lit, ok := p.(*syntax.Lit); ok && hasBraces(lit.Value) {
				any = true
			}
		}
	}
	if !any {
		return nil
	}
	var argv []string
	for _, w := range args {
		text := a.print(w)
		f, err := newParser().Parse(strings.NewReader(": "+text), "")
		if err != nil || len(f.Stmts) != 1 {
			return nil
		}
		call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) != 2 {
			return nil
		}
		cp := call.Args[1]
		syntax.SplitBraces(cp)
		n := 0
		for ew, err := range expand.BracesSeq(nil, cp) {
			if err != nil || n == 64 {
				break
			}
			n++
			argv = append(argv, a.word(ew).val)
		}
	}
	return [][]string{argv}
}

func appendForm(forms []string, f string) []string {
	for _, have := range forms {
		if have == f {
			return forms
		}
	}
	return append(forms, f)
}

// reduceProgram returns argv with the program given by its path reduced to
// its name (`/bin/rm -rf x` → `rm -rf x`).
func reduceProgram(argv []string) []string {
	if len(argv) == 0 || !strings.Contains(argv[0], "/") {
		return argv
	}
	return append([]string{path.Base(argv[0])}, argv[1:]...)
}

// commandVariables are environment variables whose value a program runs as
// a command line (GIT_SSH_COMMAND, PAGER …); fileVariables name a script
// file bash sources at start-up.
var (
	commandVariables = map[string]bool{"GIT_SSH_COMMAND": true, "GIT_EDITOR": true, "GIT_PAGER": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "PAGER": true, "MANPAGER": true,
		"SYSTEMD_PAGER": true, "EDITOR": true, "VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true,
		"PROMPT_COMMAND": true, "BROWSER": true, "SUDO_ASKPASS": true}
	fileVariables = map[string]bool{"BASH_ENV": true, "ENV": true}
)

// assignments analyses the values of variables that run commands, set by a
// statement (`GIT_SSH_COMMAND='…' git fetch`, `export PAGER='…'`) or by
// env's operands (`env BASH_ENV=<(…) bash -c …`).
func (a *analyzer) assignments(idx int, cmd syntax.Command, words []word, depth int) {
	var assigns []*syntax.Assign
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		assigns = c.Assigns
	case *syntax.DeclClause:
		assigns = c.Args
	}
	check := func(name string, value word) {
		switch {
		case commandVariables[name]:
			a.scriptWord(idx, value, depth, "the command in "+name)
		case fileVariables[name]:
			a.sourced(idx, nil, value, depth, "the file in "+name)
		}
	}
	for _, as := range assigns {
		if as.Name == nil || as.Value == nil {
			continue
		}
		check(as.Name.Value, a.word(as.Value))
	}
	if len(words) > 1 && words[0].static && path.Base(words[0].val) == "env" {
		for _, w := range words[1:] {
			if name, value, ok := strings.Cut(w.val, "="); ok && isAssignment(w.val) {
				check(name, word{val: value, static: w.static, node: w.node})
			}
		}
	}
}
