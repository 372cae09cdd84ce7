package subagentinprocess

import (
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/subagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExpandMatchesNamesAndGlobsCaseInsensitively(t *testing.T) {
	names := []string{"read", "write", "edit", "bash", "mcp__git__status", "mcp__git__log"}
	got, err := expand([]string{"Read", " mcp__git__* ", "read", ""}, names)
	if err != nil || !reflect.DeepEqual(got, []string{"read", "mcp__git__status", "mcp__git__log"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := expand([]string{}, names); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("an empty list allows nothing: %v, %v", got, err)
	}
	_, err = expand([]string{"WebFetch"}, names)
	if subagent.CodeOf(err) != subagent.CodeInvalidRequest || !strings.Contains(err.Error(), `tool "WebFetch" matches no tool of the parent (tools: read, write, edit, bash, mcp__git__status, mcp__git__log)`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := expand([]string{"[a"}, names); err == nil || !strings.Contains(err.Error(), `pattern "[a"`) {
		t.Fatalf("bad glob: %v", err)
	}
}
