package spill_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dshgo/harness/services/spill"
)

// SaveText stores the complete text privately and returns where it went and
// how the model reads it back.
func ExampleLocalStore_SaveText() {
	dir, _ := os.MkdirTemp("", "spill-example-")
	defer os.RemoveAll(dir)
	store, err := spill.NewLocalStore(spill.LocalOptions{Root: dir})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ref, err := store.SaveText(context.Background(), spill.SaveRequest{
		Owner:         spill.Owner{SessionID: "session-1"},
		Source:        spill.Source{Kind: spill.SourceTool, ToolName: "bash", CallID: "call_1", Label: "result"},
		SuggestedName: "../bash.txt",
		Content:       "héllo\n",
	})
	if err != nil {
		panic(err)
	}
	fi, _ := os.Stat(string(ref.Locator))
	fmt.Println(ref.Bytes, fi.Mode().Perm(), filepath.Dir(string(ref.Locator)) == store.OwnerDir("session-1"))
	fmt.Println(filepath.Base(string(ref.Locator))[13:])
	fmt.Println(ref.Hint)
	// Output:
	// 7 -rw------- true
	// ..~002Fbash.txt
	// Use read with offset/limit, or grep this path to search within it.
}
