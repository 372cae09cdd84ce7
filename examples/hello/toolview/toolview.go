// Package toolview is a third-party plugin with a custom tool and a web
// component that shows its calls in `harness serve`'s conversation: the
// tool "roll_dice" rolls dice, and the component (an ES module embedded in
// the plugin) draws the faces instead of the default tool card.
package toolview

import (
	"context"
	"embed"
	"fmt"
	"math/rand/v2"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/tools"
)

//go:embed assets
var assets embed.FS

// Args are the tool's arguments.
type Args struct {
	Count int `json:"count" jsonschema:"minimum=1,maximum=10,description=How many six-sided dice to roll"`
}

// Out is the tool's result: the faces rolled.
type Out struct {
	Faces []int `json:"faces"`
}

// rollDice is the tool body.
func rollDice(_ context.Context, _ *tools.Execution, a Args) (Out, error) {
	if a.Count < 1 || a.Count > 10 {
		return Out{}, fmt.Errorf("count must be 1 to 10, got %d", a.Count)
	}
	out := Out{Faces: make([]int, a.Count)}
	for i := range out.Faces {
		out.Faces[i] = 1 + rand.IntN(6)
	}
	return out, nil
}

// Plugin registers the tool and its tool view. It needs the tools and web
// services.
var Plugin = core.Define("dice", apply,
	core.WithInject(tools.Key.Name(), web.Key.Name()),
	core.WithDescription("roll_dice, with a tool view for the web app"))

func apply(c *core.Context, _ struct{}) error {
	tool := tools.Define("roll_dice", "Roll six-sided dice and return the faces.", rollDice)
	if err := tools.Register(c, tool); err != nil {
		return err
	}
	return web.AddComponent(c, "dice", assets, web.Component{
		Slot:    web.SlotConversationToolView,
		Tool:    "roll_dice",
		Element: "dice-toolview",
		Module:  "assets/dice.js",
	})
}

func init() { core.Register(Plugin) }
