package manifest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/core/manifest"
)

// The place named is the byte where the decoder stopped, counted from 1:
// for `{"a":1,}` the stray '}' is the 8th byte of line 1 (the two copies of
// this helper that existed before disagreed by one column: 8 is right).
func TestJSONErrorNamesTheOffendingByte(t *testing.T) {
	type target struct {
		A int `json:"a"`
	}
	cases := []struct {
		name, data string
		decoder    bool // json.Decoder instead of json.Unmarshal
		want       string
	}{
		{"stray brace", `{"a":1,}`, false, `f.json:1:8: invalid JSON: invalid character '}' looking for beginning of object key string`},
		{"second line", "{\n  \"a\": tru\n}", false, `f.json:2:11: invalid JSON: invalid character '\n' in literal true (expecting 'e')`},
		{"wrong type", "{\n  \"a\": \"x\"}", false, `f.json:2:10: json: cannot unmarshal string into Go struct field target.a of type int`},
		{"wrong container", "{\"a\": [1]}", false, `f.json:1:7: json: cannot unmarshal array into Go struct field target.a of type int`},
		{"truncated", `{"a":1`, false, `f.json:1:6: invalid JSON: unexpected end of JSON input`},
		{"truncated, decoder", "{\"a\":\n1", true, `f.json:2:1: invalid JSON: unexpected EOF`},
		{"multi-byte", `{"é":1,}`, false, `f.json:1:9: invalid JSON: invalid character '}' looking for beginning of object key string`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v target
			var err error
			if tc.decoder {
				err = json.NewDecoder(strings.NewReader(tc.data)).Decode(&v)
			} else {
				err = json.Unmarshal([]byte(tc.data), &v)
			}
			got := manifest.JSONError("f.json", []byte(tc.data), err)
			if got == nil || got.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", got, tc.want)
			}
			if !errors.Is(got, err) {
				t.Error("the decoding error is not in the chain")
			}
		})
	}
}

func TestJSONErrorWithoutAnOffset(t *testing.T) {
	other := errors.New("read failed")
	if got := manifest.JSONError("f.json", nil, other); got.Error() != "f.json: read failed" || !errors.Is(got, other) {
		t.Errorf("got %v", got)
	}
	if got := manifest.JSONError("", nil, other); got != other {
		t.Errorf("without a file: got %v", got)
	}
	if manifest.JSONError("f.json", nil, nil) != nil {
		t.Error("nil error is not nil")
	}
	if line, col := manifest.JSONPosition(nil, 0); line != 1 || col != 1 {
		t.Errorf("empty data: %d:%d", line, col)
	}
}
