package systemprompt

import (
	"errors"
	"strings"
	"testing"
)

func vars(kv ...string) map[string]Variable {
	m := map[string]Variable{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = Variable{Value: kv[i+1], Set: true}
	}
	return m
}

func TestRenderInterpolatesStrictlyInOnePass(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		vars    map[string]Variable
		want    string
		wantErr error
		msg     string
	}{
		{name: "plain text", text: "Be precise.", want: "Be precise."},
		{name: "substitution", text: "You are {{model}} in {{cwd}}.", vars: vars("model", "m1", "cwd", "/w"), want: "You are m1 in /w."},
		{name: "value never rescanned", text: "cwd={{cwd}}", vars: vars("cwd", "/srv/{{date}}", "date", "x"), want: "cwd=/srv/{{date}}"},
		{name: "lone open braces are prose", text: "a {{ b { c", want: "a {{ b { c"},
		{name: "open braces twice without close", text: "{{x {{y", want: "{{x {{y"},
		{name: "adjacent references", text: "{{a}}{{b}}", vars: vars("a", "1", "b", "2"), want: "12"},
		{name: "prose before later group", text: "x {{ y {{a}}", vars: vars("a", "1"),
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference at "{{ y {{a}}…" in section "s" (references are complete simple {{name}} groups)`},
		{name: "empty group", text: "{{}}",
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference "{{}}" in section "s" (variable names match /^[a-z][a-z0-9_]*$/)`},
		{name: "spaced name", text: "hi {{ model }}", vars: vars("model", "m"),
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference "{{ model }}" in section "s" (variable names match /^[a-z][a-z0-9_]*$/)`},
		{name: "uppercase name", text: "{{Model}}",
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference "{{Model}}" in section "s" (variable names match /^[a-z][a-z0-9_]*$/)`},
		{name: "triple brace", text: "{{{model}}}",
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference at "{{{model}}}…" in section "s" (references are complete simple {{name}} groups)`},
		{name: "malformed prefix cut at 16 characters", text: "{{变量变量变量变量变量 {x}}",
			wantErr: ErrMalformedReference,
			msg:     `malformed prompt variable reference at "{{变量变量变量变量变量 {x}…" in section "s" (references are complete simple {{name}} groups)`},
		{name: "unknown with registered list", text: "{{datee}}", vars: vars("model", "m", "date", "d"),
			wantErr: ErrUnknownVariable,
			msg:     `unknown prompt variable "{{datee}}" in section "s"; registered variables: date, model`},
		{name: "unknown with none registered", text: "{{constructor}}",
			wantErr: ErrUnknownVariable,
			msg:     `unknown prompt variable "{{constructor}}" in section "s"; registered variables: (none)`},
		{name: "registered without value", text: "in {{cwd}}", vars: map[string]Variable{"cwd": {}},
			wantErr: ErrNoValue,
			msg:     `prompt variable "{{cwd}}" has no value for this assembly (section "s")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &Assembly{Sections: []AssembledSection{{Name: "s", Text: tc.text, Interpolate: true}}, Variables: tc.vars}
			got, err := Render(a)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if err.Error() != tc.msg {
					t.Fatalf("message\n got %s\nwant %s", err.Error(), tc.msg)
				}
				var ref *ReferenceError
				if !errors.As(err, &ref) || ref.Owner != "s" || ref.Kind != "section" {
					t.Fatalf("error not attributed: %#v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRenderDropsEmptySectionsAndJoinsWithBlankLine(t *testing.T) {
	a := &Assembly{
		Sections: []AssembledSection{
			{Name: "a", Text: "A", Interpolate: true},
			{Name: "empty", Text: "", Interpolate: true},
			{Name: "literal", Text: "tpl {{x}} {{ y }}", Interpolate: false},
			{Name: "var-empty", Text: "{{e}}", Interpolate: true},
			{Name: "b", Text: "B", Interpolate: true},
		},
		Variables: map[string]Variable{"e": {Value: "", Set: true}},
	}
	got, err := Render(a)
	if err != nil {
		t.Fatal(err)
	}
	if want := "A\n\ntpl {{x}} {{ y }}\n\nB"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got, _ := Render(&Assembly{}); got != "" {
		t.Fatalf("empty assembly rendered %q", got)
	}
}

func TestRenderContextsVerbatimUnlessOptedIn(t *testing.T) {
	a := &Assembly{
		Contexts: []AssembledContext{
			{Name: "memory", Text: `docker --format "{{.Server.Version}}" {{model}}`},
			{Name: "none", Text: ""},
			{Name: "opt-in", Text: "model {{model}}", Interpolate: true},
		},
		Variables: vars("model", "m1"),
	}
	got, err := RenderContextSnapshot(a)
	if err != nil {
		t.Fatal(err)
	}
	want := ContextSnapshotHeader + "\n\n" + `docker --format "{{.Server.Version}}" {{model}}` + "\n\nmodel m1"
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	a.Contexts[2].Text = "{{nope}}"
	_, err = RenderContexts(a)
	if err == nil || err.Error() != `unknown prompt variable "{{nope}}" in context "opt-in"; registered variables: model` {
		t.Fatalf("err = %v", err)
	}
	if got, _ := RenderContextSnapshot(&Assembly{}); got != "" {
		t.Fatalf("empty snapshot = %q", got)
	}
}

func TestRenderSectionsJoinToRender(t *testing.T) {
	a := &Assembly{
		Sections: []AssembledSection{
			{Name: "a", Order: 1, Text: "hi {{who}}", Interpolate: true},
			{Name: "empty", Order: 2, Text: "", Interpolate: true},
			{Name: "b", Order: 3, Text: "{{who}}"},
		},
		Variables: vars("who", "you"),
	}
	secs, err := RenderSections(a)
	if err != nil {
		t.Fatal(err)
	}
	want := []RenderedSection{{Name: "a", Order: 1, Text: "hi you"}, {Name: "b", Order: 3, Text: "{{who}}"}}
	if len(secs) != 2 || secs[0] != want[0] || secs[1] != want[1] {
		t.Fatalf("sections = %+v", secs)
	}
	full, _ := Render(a)
	if full != secs[0].Text+"\n\n"+secs[1].Text {
		t.Fatalf("render %q disagrees with sections", full)
	}
	a.Sections[0].Text = "{{nope}}"
	if _, err := RenderSections(a); !errors.Is(err, ErrUnknownVariable) {
		t.Fatalf("err = %v", err)
	}
}

// FuzzInterpolate checks that interpolation never panics, leaves text
// without "{{" untouched, and never rescans substituted values.
func FuzzInterpolate(f *testing.F) {
	for _, seed := range []string{"", "plain", "{{a}}", "{{ a }}", "{{{a}}}", "x {{ y", "{{a}}{{b}}", "{{变量}}", "}}{{", "{{a}"} {
		f.Add(seed)
	}
	vars := vars("a", "{{b}}", "b", "B")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := interpolate(text, "section", "s", vars, false)
		if !strings.Contains(text, "{{") && (err != nil || out != text) {
			t.Fatalf("text without references changed: %q -> %q, %v", text, out, err)
		}
		if err == nil && text == "{{a}}" && out != "{{b}}" {
			t.Fatalf("value rescanned: %q", out)
		}
	})
}
