package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

// Execute returns the same result with and without the accept-only fast
// check, over random schemas of its keyword subset and random arguments.
func TestExecuteFastPathDifferential(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := rand.New(rand.NewSource(1))
	body := func(_ context.Context, _ *tools.Execution, args json.RawMessage) (any, error) {
		return string(args), nil
	}
	compared, succeeded := 0, 0
	for i := range 400 {
		data := make([]byte, 48)
		r.Read(data)
		schema, argsList := tools.FastPathSample(data)
		fast := tools.DefineRaw(fmt.Sprintf("fast%d", i), "d", json.RawMessage(schema), body)
		slow := tools.DisableFastCheck(tools.DefineRaw(fmt.Sprintf("slow%d", i), "d", json.RawMessage(schema), body))
		if fast.Err() != nil || slow.Err() != nil {
			continue
		}
		e.register(fast, slow)
		for _, args := range argsList {
			o1, o2 := e.exec(fast.Name(), args), e.exec(slow.Name(), args)
			if got, want := outcomeKey(o1), outcomeKey(o2); !reflect.DeepEqual(got, want) {
				t.Fatalf("schema %s args %s:\n with fast check %v\n without        %v", schema, args, got, want)
			}
			compared++
			if !o1.IsError {
				succeeded++
			}
		}
	}
	if compared == 0 || succeeded == 0 || succeeded == compared {
		t.Fatalf("compared %d calls, %d successes: the sample does not exercise both outcomes", compared, succeeded)
	}
}

// outcomeKey is what a caller sees of an outcome; violations compare as a
// set (the library orders several unknown keys by map iteration).
func outcomeKey(o *tools.Outcome) []any {
	msg := strings.Split(o.ErrorMessage, "; ")
	sort.Strings(msg)
	body := ""
	if !o.IsError {
		body = text(o)
	}
	return []any{o.IsError, code(o), msg, body, len(o.Content), o.Value, string(o.Meta), o.AdditionalContexts}
}
