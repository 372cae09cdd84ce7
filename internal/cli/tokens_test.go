package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/cli"
)

func runStdin(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin),
		DefaultManifest: []byte("plugins: []\n"),
		LookupEnv:       func(string) (string, bool) { return "", false },
		Getwd:           outsideRepo(t),
		Ctx:             context.Background(),
	}
	code := cli.Run(args, env)
	return out.String(), errb.String(), code
}

func TestTokensCountsFilesAndStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	english := filepath.Join("..", "..", "services", "tokenmeter", "testdata", "english.txt")
	data, err := os.ReadFile(english)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"bytes from stdin", "abcde", []string{"tokens", "--estimator", "bytes"}, "2\n"},
		{"dash is stdin", "abcd", []string{"tokens", "--estimator", "bytes", "-"}, "1\n"},
		{"o200k file", "", []string{"tokens", "--estimator", "o200k", english}, "264\n"},
		{"cl100k file", "", []string{"tokens", "--estimator", "cl100k", english}, "263\n"},
		{"heuristic default", "hello world", []string{"tokens"}, "2\n"},
		{"json", "", []string{"tokens", "--estimator", "bytes", "--json", english},
			`{"estimator":"bytes","tokens":` + itoa((len(data)+3)/4) + `,"bytes":` + itoa(len(data)) + "}\n"},
		{"empty stdin", "", []string{"tokens", "--json"}, `{"estimator":"heuristic","tokens":0,"bytes":0}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runStdin(t, tc.stdin, tc.args...)
			if code != 0 || out != tc.want {
				t.Errorf("code %d out %q err %q, want %q", code, out, errOut, tc.want)
			}
		})
	}
	tok := filepath.Join(dir, "tokenizer.json")
	writeTinyTokenizer(t, tok)
	out, errOut, code := runStdin(t, "the world", "tokens", "--tokenizer", tok, "--json")
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep["estimator"] != "tokenizer-json" || rep["tokens"] != float64(3) {
		t.Errorf("tokenizer-json: code %d out %q err %q", code, out, errOut)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// writeTinyTokenizer writes a byte-level BPE tokenizer.json whose only merge
// is "h e": "the world" → "t" "he" "Ġ" "w"… (pieces "the", " world").
func writeTinyTokenizer(t *testing.T, path string) {
	t.Helper()
	vocab := map[string]int{}
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			vocab[string(rune(b))] = b
		} else {
			vocab[string(rune(256+n))] = b
			n++
		}
	}
	vocab["he"] = 256
	vocab["Ġworld"] = 257
	vocab["Ġw"] = 258
	vocab["or"] = 259
	vocab["Ġwor"] = 260
	vocab["ld"] = 261
	doc := map[string]any{
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{
			"h e", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld"}},
	}
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTokensErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tokens", "--estimator", "words"}, 2, `unknown estimator "words"`},
		{[]string{"tokens", "--estimator", "tokenizer-json"}, 2, "needs --tokenizer FILE"},
		{[]string{"tokens", "--estimator", "bytes", "--tokenizer", "x.json"}, 2, "--tokenizer needs --estimator tokenizer-json"},
		{[]string{"tokens", "--tokenizer", "/nonexistent.json"}, 1, "tokenizer-json:"},
		{[]string{"tokens", "/nonexistent/file"}, 1, "no such file"},
		{[]string{"tokens", "a", "b"}, 2, "arg(s)"},
	} {
		_, errOut, code := runStdin(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: code %d err %q, want %d %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
