package toolview_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/web"

	"go.uber.org/goleak"

	_ "example.com/hello/toolview"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The dice plugin's tool view is listed in the page's boot info and its
// module is served from the plugin's embedded assets.
func TestToolViewIsMountedInTheWebApp(t *testing.T) {
	h := harnesstest.Start(t, "plugins:\n  - name: tools\n  - name: workspaces\n    config: {stateDir: "+t.TempDir()+"}\n  - name: web\n  - name: dice\n")
	srv := harnesstest.Service(t, h, web.Key)
	get := func(path string) (int, string, string) {
		r, _ := http.NewRequest("GET", srv.BaseURL()+path, nil)
		r.Header.Set("Authorization", "Bearer "+srv.Token())
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, _, body := get("/api/boot")
	var boot struct{ Slots []web.Component }
	if err := json.Unmarshal([]byte(body), &boot); err != nil || code != 200 {
		t.Fatalf("boot: %d %s", code, body)
	}
	if len(boot.Slots) != 1 || boot.Slots[0].Tool != "roll_dice" || boot.Slots[0].URL != "/slots/dice/assets/dice.js" {
		t.Fatalf("slots %+v", boot.Slots)
	}
	code, ctype, js := get(boot.Slots[0].URL)
	if code != 200 || !strings.Contains(ctype, "javascript") || !strings.Contains(js, `customElements.define("dice-toolview"`) {
		t.Fatalf("module: %d %s %.80s", code, ctype, js)
	}
}
